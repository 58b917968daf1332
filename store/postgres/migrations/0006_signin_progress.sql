-- Migration 6: pending sign-in requests are no longer stored (the browser
-- and the wallet carry them as sealed tokens, oidc/doc.go "Pending
-- sign-ins"); only what happened to one is: scanned, approved, cancelled,
-- finished. Requests stored by older versions expire within 10 minutes and
-- are dropped.
DROP TABLE signin_requests;

CREATE TABLE signin_progress (
	id                 text COLLATE "C" PRIMARY KEY,
	state              text NOT NULL,
	subject            text NOT NULL,
	verification_level text NOT NULL,
	auth_ns            bigint NOT NULL,
	expires_ns         bigint NOT NULL
);
CREATE INDEX signin_progress_expiry ON signin_progress (expires_ns);
