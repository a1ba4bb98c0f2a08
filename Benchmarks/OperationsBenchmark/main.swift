print("operations benchmark")
