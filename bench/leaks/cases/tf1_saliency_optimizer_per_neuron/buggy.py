"""Per-neuron saliency maps build a fresh gradient "optimizer" (loss, K.gradients, K.function) for every neuron

Source: https://github.com/raghakot/keras-vis/issues/223
Style: tf1-session
Kind: graph grows per neuron: each saliency call adds a loss, a gradient sub-graph and a backend function; iterations get slower and memory climbs
"""
import numpy as np
from keras import backend as K
from keras.layers import Conv2D, Dense, Flatten, Input
from keras.models import Model


def build_model(n_features=4096):
    image = Input((64, 64, 3))
    net = Conv2D(32, 3, strides=2, activation="relu")(image)
    net = Conv2D(64, 3, strides=2, activation="relu", name="penultimate")(net)
    features = Dense(n_features, name="features")(Flatten()(net))
    return Model(image, features)


def saliency(model, neuron, image):
    output = model.get_layer("features").output
    loss = output[:, neuron]  # leak: new:tf1-graph-growth
    grads = K.gradients(loss, model.input)[0]  # leak: new:tf1-graph-growth
    grads = grads / (K.sqrt(K.mean(K.square(grads))) + 1e-5)  # leak: new:tf1-graph-growth
    compute = K.function([model.input], [grads])  # leak: new:tf1-graph-growth
    return np.abs(compute([image[None]])[0][0]).max(axis=-1)


def main():
    model = build_model()
    image = np.random.default_rng(0).random((64, 64, 3), dtype=np.float32)
    n_neurons = model.output_shape[-1]
    maps = np.zeros((n_neurons, 64, 64), dtype=np.float32)
    for neuron in range(n_neurons):
        maps[neuron] = saliency(model, neuron, image)
        if neuron % 128 == 0:
            print(f"{neuron}/{n_neurons} saliency maps done")
    np.save("neuron_saliency.npy", maps)


if __name__ == "__main__":
    main()
