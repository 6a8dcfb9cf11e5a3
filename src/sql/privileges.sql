-- Who owns the store, and who may run what with its rights (docs/security.md). Run after every
-- other file of the extension, and again, whole, by every upgrade script.
--
-- The store's tables, views and sequences belong to knowledge_store, a role made for them that
-- cannot log in and holds nothing else but CREATE on schema knowledge (for each chunk config's
-- indexes). The functions that write what their caller may not (the trigger functions, the
-- queue's) run as that role (SECURITY DEFINER, owned by it), never as the superuser who created
-- the extension: a mistake in one of them can reach the store's tables, not the server. No one
-- but their owner and superusers may execute them, so no one else can attach them to a table of
-- their own; and each trigger function checks the table it fires on (knowledge_internal.fires_on).
-- knowledge.models stays the superuser's: it decides which files a backend reads.

-- knowledge_store is made once per cluster (roles are the cluster's, not a database's) and kept
-- when the extension is dropped. A role of that name made by someone else is used only if it has
-- no right beyond a plain role's and no member that is not a superuser: otherwise whoever could
-- become it, or whatever it could do, would come with the store.
DO $$
DECLARE
    store_role CONSTANT name := 'knowledge_store';
    existing pg_catalog.pg_roles;
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles AS r WHERE r.rolname = store_role) THEN
        BEGIN
            EXECUTE format('CREATE ROLE %I NOLOGIN NOINHERIT', store_role);
            RETURN;
        EXCEPTION WHEN unique_violation OR duplicate_object THEN
            -- Made meanwhile by CREATE EXTENSION in another database: checked as any other.
        END;
    END IF;
    SELECT * INTO existing FROM pg_catalog.pg_roles AS r WHERE r.rolname = store_role;
    IF existing.rolsuper OR existing.rolcanlogin OR existing.rolcreaterole OR existing.rolcreatedb OR existing.rolreplication
       OR existing.rolbypassrls
       OR EXISTS (SELECT FROM pg_catalog.pg_auth_members AS m WHERE m.member = existing.oid)
       OR EXISTS (SELECT FROM pg_catalog.pg_auth_members AS m JOIN pg_catalog.pg_roles AS r ON r.oid = m.member
                  WHERE m.roleid = existing.oid AND NOT r.rolsuper) THEN
        RAISE EXCEPTION 'role % exists and is not the plain role pg_chunk''s store needs', store_role
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'pg_chunk''s store runs its triggers as this role, so it must not log in, have any attribute (SUPERUSER, CREATEROLE, CREATEDB, REPLICATION, BYPASSRLS), be a member of another role or have members other than superusers.',
                  HINT = format('Drop the role or take those away (ALTER ROLE %I NOLOGIN ..., REVOKE ...), then run this again.', store_role);
    END IF;
END
$$;

GRANT CREATE ON SCHEMA knowledge TO knowledge_store;

DO $$
DECLARE
    object record;
BEGIN
    FOR object IN
        SELECT c.oid::regclass AS name, CASE c.relkind WHEN 'v' THEN 'VIEW' WHEN 'S' THEN 'SEQUENCE' ELSE 'TABLE' END AS kind
        FROM pg_catalog.pg_class AS c
        JOIN pg_catalog.pg_depend AS d ON d.classid = 'pg_catalog.pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e'
        WHERE d.refclassid = 'pg_catalog.pg_extension'::regclass
          AND d.refobjid = (SELECT e.oid FROM pg_catalog.pg_extension AS e WHERE e.extname = 'pg_chunk')
          AND c.relkind IN ('r', 'p', 'v', 'S') AND c.oid <> 'knowledge.models'::regclass
          -- A table's identity sequences go with it.
          AND NOT EXISTS (SELECT FROM pg_catalog.pg_depend AS o WHERE o.classid = 'pg_catalog.pg_class'::regclass
                          AND o.objid = c.oid AND o.deptype IN ('a', 'i'))
        ORDER BY 1
    LOOP
        EXECUTE format('ALTER %s %s OWNER TO knowledge_store', object.kind, object.name);
    END LOOP;
    FOR object IN
        SELECT p.oid::regprocedure AS name FROM pg_catalog.pg_proc AS p
        WHERE p.pronamespace IN ('knowledge'::regnamespace, 'knowledge_internal'::regnamespace) AND p.prosecdef
        ORDER BY 1
    LOOP
        EXECUTE format('ALTER FUNCTION %s OWNER TO knowledge_store', object.name);
        EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', object.name);
    END LOOP;
END
$$;
