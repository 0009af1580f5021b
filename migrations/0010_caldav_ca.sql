-- Kairos store: a CalDAV account may trust a CA of its own (issue #19 §2,
-- `kairos caldav add --ca FILE.pem`: a self-hosted server whose certificate
-- a private CA signed). APPEND-ONLY.
--
-- * caldav_accounts.ca_pem — the CA certificate(s), PEM, trusted for this
--   account in addition to the web's roots; NULL: the web's roots only.
--   A certificate is public: no secret is stored here.

ALTER TABLE caldav_accounts ADD COLUMN ca_pem TEXT;
