"""Reading through a circle model: the model reader, onert's entry order (predicted or probed),
binding entries to tensors, fresh checkpoints from a model's weights, dialect conversion."""
