// Module BLEProtocols.
