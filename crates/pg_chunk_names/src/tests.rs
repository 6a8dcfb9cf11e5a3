use super::{NamedSet, UnknownName};

named_enum! {
    /// A set to test the macro with.
    enum Colour ("colour") {
        /// The first.
        Red = "red",
        /// Spelled with an underscore, as SQL names are.
        DarkBlue = "dark_blue",
    }
}

#[test]
fn every_name_reads_back_as_its_value() {
    assert_eq!(Colour::ALL, &[Colour::Red, Colour::DarkBlue]);
    for colour in Colour::ALL {
        assert_eq!(colour.to_string().parse::<Colour>(), Ok(*colour));
        assert_eq!(colour.as_str(), colour.to_string());
    }
    assert_eq!(Colour::DarkBlue.as_str(), "dark_blue");
}

#[test]
fn an_unknown_name_is_an_error_that_names_it_and_its_set() {
    let error = "Red".parse::<Colour>().unwrap_err();
    assert_eq!(error, UnknownName { what: "colour", value: "Red".to_string() });
    assert_eq!(error.to_string(), "unknown colour \"Red\"");
}

#[test]
fn quoted_names_list_the_choices_in_order() {
    assert_eq!(Colour::quoted_names(), "\"red\", \"dark_blue\"");
}
