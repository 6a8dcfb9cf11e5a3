use super::*;

#[test]
fn runs_become_overlapping_bigrams() {
    assert_eq!(cjk_bigrams("数据库管理"), " 数据 据库 库管 管理 ");
    assert_eq!(cjk_bigrams("PostgreSQL是数据库。"), "PostgreSQL 是数 数据 据库 。");
    assert_eq!(cjk_bigrams("日本語のテキスト"), " 日本 本語 語の のテ テキ キス スト ");
    assert_eq!(cjk_bigrams("한국어 문장"), " 한국 국어   문장 ");
    assert_eq!(cjk_bigrams("一"), " 一 ");
}

#[test]
fn other_text_is_borrowed_unchanged() {
    for text in ["", "plain English.", "हिन्दी भाषा में डेटाबेस", "Ünïcödé"]
    {
        assert!(matches!(cjk_bigrams(text), Cow::Borrowed(t) if t == text));
    }
}
