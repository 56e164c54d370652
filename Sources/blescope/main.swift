print("blescope")
