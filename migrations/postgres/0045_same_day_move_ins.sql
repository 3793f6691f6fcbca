-- The last moment of a business day (market time, HH:MM) at which a utility still takes a
-- move-in for that same day; NULL when it starts move-ins the next day at the earliest.
ALTER TABLE tdus ADD COLUMN same_day_cutoff TEXT;

-- The competitive utilities work same-day move-ins requested by 17:00 on a business day;
-- Lubbock's joined retail choice with next-day move-ins only.
UPDATE tdus SET same_day_cutoff = '17:00' WHERE name IN ('ONCOR', 'CENTERPOINT', 'AEP_CENTRAL', 'AEP_NORTH', 'TNMP');
