print("cluster benchmark: see scripts/bench-cluster")
