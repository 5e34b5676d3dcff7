"""A CRNN OCR service calls K.ctc_decode on every prediction; each call adds decoding ops to the graph

Source: https://github.com/keras-team/keras/issues/9011
Style: keras-fit
Kind: graph grows per image: K.ctc_decode builds new CTC decoder ops in the backend graph on every call; time and memory per call keep growing
"""
import itertools
import os

import numpy as np
from keras import backend as K
from keras.layers import GRU, Bidirectional, Conv2D, Dense, Input, MaxPooling2D, Permute, Reshape
from keras.models import Model

CHARSET = "0123456789abcdefghijklmnopqrstuvwxyz"


def get_model(height=32, width=280, nclass=len(CHARSET) + 1):
    inp = Input(shape=(height, width, 1))
    x = Conv2D(64, 3, padding="same", activation="relu")(inp)
    x = MaxPooling2D((2, 2))(x)
    x = Conv2D(128, 3, padding="same", activation="relu")(x)
    x = MaxPooling2D((2, 2))(x)
    x = Conv2D(256, 3, padding="same", activation="relu")(x)
    x = MaxPooling2D((4, 1))(x)
    x = Permute((2, 1, 3))(x)
    x = Reshape((width // 4, -1))(x)
    x = Bidirectional(GRU(128, return_sequences=True))(x)
    y_pred = Dense(nclass, activation="softmax")(x)
    return Model(inp, y_pred)


def decode(basemodel, image):
    y_pred = basemodel.predict_on_batch(image[None, :, :, None])
    best = y_pred[0].argmax(axis=-1)
    blank = len(CHARSET)
    out = [k for k, _ in itertools.groupby(best) if k != blank]
    return "".join(CHARSET[i] for i in out)


def load_line_images(folder, n=20000, height=32, width=280):
    if folder and os.path.isdir(folder):
        for name in sorted(os.listdir(folder)):
            yield name, np.load(os.path.join(folder, name)).astype("float32")
    else:
        for i in range(n):
            yield f"line_{i}", np.random.rand(height, width).astype("float32")


if __name__ == "__main__":
    basemodel = get_model()
    if os.path.exists("ocr_weights.h5"):
        basemodel.load_weights("ocr_weights.h5")
    for name, image in load_line_images(os.environ.get("OCR_LINES")):
        print(name, decode(basemodel, image))
