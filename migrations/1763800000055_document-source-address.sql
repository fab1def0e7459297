-- Up Migration
-- The address a kept chapters or transcript document came from: a process serves the copy only while its
-- own address policy allows that address (docs/web.md). Copies kept before have none and are fetched again.
ALTER TABLE item_documents ADD COLUMN source_address inet;

-- Down Migration
ALTER TABLE item_documents DROP COLUMN source_address;
