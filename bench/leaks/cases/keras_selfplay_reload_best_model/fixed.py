"""Self-play worker reloads the newest best model from disk every few games, never clearing the Keras session

Source: https://github.com/mokemokechicken/reversi-alpha-zero/pull/31
Style: keras-fit
Kind: Keras models loaded in a loop without clear_session: each reload adds another model to the backend session until GPU ResourceExhaustedError
"""
import json
import os
import time

import numpy as np
from keras import backend as K
from keras.models import Model, model_from_json

CHAMPION_CONFIG = "models/champion.json"
CHAMPION_WEIGHTS = "models/champion.h5"


class OthelloNet:
    def __init__(self):
        self.model: Model | None = None
        self.digest = None

    def load(self, config_path, weight_path, clear_session=False):
        if clear_session:
            # The worker holds no other model, so dropping the whole session is safe here.
            K.clear_session()
        with open(config_path) as handle:
            self.model = model_from_json(json.dumps(json.load(handle)))
        self.model.load_weights(weight_path)
        self.digest = os.path.getmtime(weight_path)

    def predict(self, boards):
        policy, value = self.model.predict_on_batch(boards)
        return policy, value


def play_game(model, rng, max_moves=60):
    records = []
    for _ in range(max_moves):
        boards = rng.integers(0, 2, (1, 2, 8, 8)).astype(np.float32)
        policy, value = model.predict(boards)
        records.append((int(np.argmax(policy[0])), float(value[0, 0])))
    return records


def self_play(n_games=100_000, reload_every=10):
    rng = np.random.default_rng(0)
    model = OthelloNet()
    model.load(CHAMPION_CONFIG, CHAMPION_WEIGHTS)
    for game in range(n_games):
        if game % reload_every == 0 and os.path.getmtime(CHAMPION_WEIGHTS) != model.digest:
            model.load(CHAMPION_CONFIG, CHAMPION_WEIGHTS, clear_session=True)
            print(f"game {game}: reloaded best model ({K.backend()})")
        records = play_game(model, rng)
        with open(f"selfplay/game_{game:07d}.json", "w") as handle:
            json.dump(records, handle)
        time.sleep(0.001)


if __name__ == "__main__":
    self_play()
