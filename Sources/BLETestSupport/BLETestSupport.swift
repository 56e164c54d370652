// Module BLETestSupport.
