print("pipeline")
