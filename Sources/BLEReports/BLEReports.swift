// Module BLEReports.
