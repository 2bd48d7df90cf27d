-- Up Migration

-- Whether a named internal token reads personal data (the overlay's personalData: participants,
-- and each column it names). Tokens that existed before the grant keep what they could read:
-- the column is added as true for them, then new tokens start without it.
ALTER TABLE internal_tokens ADD COLUMN personal_data boolean NOT NULL DEFAULT true;
ALTER TABLE internal_tokens ALTER COLUMN personal_data SET DEFAULT false;

-- Down Migration
ALTER TABLE internal_tokens DROP COLUMN personal_data;
