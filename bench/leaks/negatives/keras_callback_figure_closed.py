"""Keras callback that renders a prediction figure every epoch, saves it, and closes it

Source: https://github.com/AIS-Bonn/OCVP-object-centric-video-prediction/pull/3
Style: keras-callback
Kind: negative: resembles a pyplot figure created every epoch and never closed (LL303); plt.close(fig) runs after every save
"""
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import tensorflow as tf


class ForecastPlot(tf.keras.callbacks.Callback):
    def __init__(self, history_window, future, out_dir="plots"):
        super().__init__()
        self.history_window = history_window
        self.future = future
        self.out_dir = out_dir
        os.makedirs(out_dir, exist_ok=True)

    def on_epoch_end(self, epoch, logs=None):
        forecast = self.model(self.history_window[None], training=False).numpy()[0]
        fig, ax = plt.subplots(figsize=(8, 3))
        steps = np.arange(len(self.history_window) + len(self.future))
        ax.plot(steps[:len(self.history_window)], self.history_window[:, 0], label="history")
        ax.plot(steps[len(self.history_window):], self.future, label="truth")
        ax.plot(steps[len(self.history_window):], forecast, label="forecast")
        ax.legend()
        fig.savefig(os.path.join(self.out_dir, f"epoch_{epoch:04d}.png"))
        plt.close(fig)


def build_forecaster(window=96, horizon=24):
    model = tf.keras.Sequential([
        tf.keras.Input((window, 1)),
        tf.keras.layers.LSTM(64),
        tf.keras.layers.Dense(horizon),
    ])
    model.compile(optimizer="adam", loss="mse")
    return model


if __name__ == "__main__":
    t = np.arange(50_000, dtype=np.float32)
    series = np.sin(t / 24) + 0.1 * np.random.default_rng(0).standard_normal(t.size).astype(np.float32)
    x = np.stack([series[i:i + 96] for i in range(0, 40_000, 4)])[..., None]
    y = np.stack([series[i + 96:i + 120] for i in range(0, 40_000, 4)])
    build_forecaster().fit(x, y, epochs=200, batch_size=128, verbose=0,
                           callbacks=[ForecastPlot(series[45_000:45_096, None], series[45_096:45_120])])
