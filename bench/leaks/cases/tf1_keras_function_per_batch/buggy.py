"""Gradient-statistics helper builds optimizer.get_gradients and K.function every time it is called

Source: https://github.com/keras-team/keras/issues/8495
Style: tf1-session
Kind: graph grows per batch: each call adds the gradient sub-graph and a new backend function to the Keras session graph
"""
import numpy as np
from keras import backend as K
from keras.applications import vgg16
from keras.optimizers import SGD
from keras.preprocessing.image import ImageDataGenerator

IMAGE_SIZE = (224, 224)
BATCH_SIZE = 8


def layer_gradients(model, inputs, labels, layer_names):
    weights = model.trainable_weights
    grad_tensors = model.optimizer.layer_gradients(model.total_loss, weights)  # leak: new:tf1-graph-growth
    feeds = [model.inputs[0], model.sample_weights[0], model.targets[0], K.learning_phase()]
    gradient_fn = K.function(inputs=feeds, outputs=grad_tensors)  # leak: new:tf1-graph-growth
    values = gradient_fn([inputs, np.ones(len(inputs)), labels, 0])
    return dict(zip(layer_names, values))


def gradient_norms(model, generator, steps):
    layer_names = [w.name for w in model.trainable_weights]
    history = {name: [] for name in layer_names}
    for step in range(steps):
        images, labels = next(generator)
        for name, grad in layer_gradients(model, images, labels, layer_names).items():
            history[name].append(float(np.linalg.norm(grad)))
        model.train_on_batch(images, labels)
        if step % 20 == 0:
            print(f"step {step}: first-layer grad norm {history[layer_names[0]][-1]:.3e}")
    return history


if __name__ == "__main__":
    model = vgg16.VGG16(weights=None, classes=10)
    model.compile(optimizer=SGD(lr=1e-2, momentum=0.9, nesterov=True), loss="categorical_crossentropy")
    flow = ImageDataGenerator(rescale=1.0 / 255).flow_from_directory(
        "train_images", target_size=IMAGE_SIZE, batch_size=BATCH_SIZE, class_mode="categorical"
    )
    norms = gradient_norms(model, flow, steps=5000)
    np.save("gradient_norms.npy", norms)
