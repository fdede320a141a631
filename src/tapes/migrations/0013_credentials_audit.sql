-- Credentials minted at runtime, and the audit log (docs/security.md).
--
-- Tenancy: every stored table already leads its key with `tenant` (spans, logs, steps,
-- recall's trace_words and recall_backlog; runs are views over spans). The default tenant
-- is '' (the empty name): what an open server, an unbound credential and every older
-- tapedeck stored. The public views show it as NULL.

-- Credentials an admin minted (POST /v1/credentials). Configured tokens (TAPEDECK_TOKENS)
-- are never stored. Only the SHA-256 of a secret is kept: a token is 32 random bytes, so a
-- slow hash would add nothing but latency to every request.
CREATE TABLE tapedeck_store.credentials (
  id             text        PRIMARY KEY,            -- 'cr_<hex>'
  name           text        NOT NULL,
  role           text        NOT NULL CHECK (role IN ('ro', 'rw', 'admin')),
  tenant         text,                               -- NULL: not bound to a tenant
  secret_sha256  bytea       NOT NULL UNIQUE,
  created_at     timestamptz NOT NULL DEFAULT now(),
  created_by     text        NOT NULL,
  revoked_at     timestamptz,
  revoked_by     text
);

-- Every use of a credential that changed something: minting, revoking, erasures,
-- retention runs. Written in the transaction of the change it records where there is one.
CREATE TABLE tapedeck_store.audit_log (
  id            bigserial   PRIMARY KEY,
  at            timestamptz NOT NULL DEFAULT now(),
  action        text        NOT NULL,   -- e.g. credential.mint, credential.revoke, erasure.record
  actor         text        NOT NULL,   -- the credential's name; 'open' on an open server; 'system'
  actor_role    text,                   -- ro, rw, admin; NULL for 'open' and 'system'
  actor_tenant  text,                   -- the credential's tenant; NULL: not bound
  tenant        text,                   -- the tenant acted on; NULL: every tenant or none
  subject       jsonb       NOT NULL DEFAULT '{}',  -- what was acted on
  detail        jsonb       NOT NULL DEFAULT '{}'   -- outcome: counts, ids
);
CREATE INDEX audit_log_at_idx ON tapedeck_store.audit_log (at);

CREATE VIEW tapedeck.audit_log AS
SELECT id, at, action, actor, actor_role, actor_tenant, tenant, subject, detail
FROM tapedeck_store.audit_log;

-- Tenant-scoped SQL access (docs/sql.md, "One tenant's view"). A database role named in
-- tenant_roles sees only that tenant's rows through the public views; a role not named
-- there sees every tenant, as before. tapedeck itself owns the tables, so these policies
-- never filter its own reads (PostgreSQL does not apply row-level security to a table's
-- owner), and superusers bypass them too.
CREATE TABLE tapedeck_store.tenant_roles (
  role_name  name PRIMARY KEY,
  tenant     text NOT NULL
);

-- Runs as its owner, so a tenant role needs no access to tenant_roles itself.
CREATE FUNCTION tapedeck_store.tenant_of_role(p_role name)
RETURNS text LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog AS $$
  SELECT tenant FROM tapedeck_store.tenant_roles WHERE role_name = p_role
$$;

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['spans', 'logs', 'steps', 'trace_words', 'recall_backlog', 'audit_log'] LOOP
    EXECUTE format('ALTER TABLE tapedeck_store.%I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format(
      'CREATE POLICY tenant_rows ON tapedeck_store.%I USING (tenant IS NOT DISTINCT FROM COALESCE(tapedeck_store.tenant_of_role(current_user), tenant))',
      t);
  END LOOP;
END $$;

-- The views check privileges and policies as the role reading them, not as their owner,
-- so the policies above reach through them.
ALTER VIEW tapedeck.spans SET (security_invoker = true);
ALTER VIEW tapedeck.logs SET (security_invoker = true);
ALTER VIEW tapedeck.tape_steps SET (security_invoker = true);
ALTER VIEW tapedeck.step_messages SET (security_invoker = true);
ALTER VIEW tapedeck.runs SET (security_invoker = true);
ALTER VIEW tapedeck_store.run_steps SET (security_invoker = true);
ALTER VIEW tapedeck.audit_log SET (security_invoker = true);
