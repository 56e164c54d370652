// Module BLEAnalysis.
