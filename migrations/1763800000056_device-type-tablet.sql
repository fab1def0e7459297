-- Up Migration
-- A tablet is a device type of gpodder.net's own (mygpo's Client.TYPES): apps that send it are answered
-- as mygpo answers them, not refused.
ALTER TABLE devices DROP CONSTRAINT devices_type_check;
ALTER TABLE devices ADD CONSTRAINT devices_type_check
  CHECK (type IN ('desktop', 'laptop', 'mobile', 'server', 'tablet', 'other'));

-- Down Migration
-- A tablet is a mobile device to the earlier schema.
UPDATE devices SET type = 'mobile' WHERE type = 'tablet';
ALTER TABLE devices DROP CONSTRAINT devices_type_check;
ALTER TABLE devices ADD CONSTRAINT devices_type_check
  CHECK (type IN ('desktop', 'laptop', 'mobile', 'server', 'other'));
