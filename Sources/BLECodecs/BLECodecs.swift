// Module BLECodecs.
