"""Hyperopt search over a citation-recommendation embedding model: every evaluation builds a new Keras model in the same session

Source: https://github.com/allenai/citeomatic/pull/32
Style: keras-fit
Kind: Keras model built per hyperopt evaluation without clear_session: fmin calls the objective once per trial, each call adds a new computation graph (embedding tables included) to Keras's global state, and the search runs out of memory after a few dozen trials
"""
import numpy as np
from hyperopt import STATUS_OK, Trials, fmin, hp, tpe
from hyperopt.pyll import scope
from tensorflow import keras

VOCAB = 50000
TITLE_LEN = 32
ABSTRACT_LEN = 256


def text_encoder(tokens, embedding, dense_dim, l2_lambda, name):
    x = embedding(tokens)
    x = keras.layers.GlobalAveragePooling1D(name=f"{name}_pool")(x)
    x = keras.layers.Dense(dense_dim, activation="tanh", kernel_regularizer=keras.regularizers.l2(l2_lambda),
                           name=f"{name}_proj")(x)
    return keras.layers.UnitNormalization(name=f"{name}_norm")(x)


def create_model(params):
    embedding = keras.layers.Embedding(VOCAB, int(params["embed_dim"]), name="shared_embedding")
    query_title = keras.Input((TITLE_LEN,), dtype="int32", name="query_title")
    query_abstract = keras.Input((ABSTRACT_LEN,), dtype="int32", name="query_abstract")
    cand_title = keras.Input((TITLE_LEN,), dtype="int32", name="candidate_title")
    cand_abstract = keras.Input((ABSTRACT_LEN,), dtype="int32", name="candidate_abstract")
    dim, l2 = int(params["dense_dim"]), params["l2_lambda"]
    query = keras.layers.Add()([text_encoder(query_title, embedding, dim, l2, "q_title"),
                                text_encoder(query_abstract, embedding, dim, l2, "q_abstract")])
    cand = keras.layers.Add()([text_encoder(cand_title, embedding, dim, l2, "c_title"),
                               text_encoder(cand_abstract, embedding, dim, l2, "c_abstract")])
    score = keras.layers.Dot(axes=1)([query, cand])
    prob = keras.layers.Activation("sigmoid")(score)
    model = keras.Model([query_title, query_abstract, cand_title, cand_abstract], prob)
    model.compile(optimizer=keras.optimizers.Nadam(params["lr"]), loss="binary_crossentropy")
    return model


def fake_pairs(rng, n):
    papers = [rng.integers(1, VOCAB, (n, TITLE_LEN)), rng.integers(1, VOCAB, (n, ABSTRACT_LEN))]
    cands = [rng.integers(1, VOCAB, (n, TITLE_LEN)), rng.integers(1, VOCAB, (n, ABSTRACT_LEN))]
    return papers + cands, rng.integers(0, 2, n).astype(np.float32)


class CitationSearch:
    def __init__(self, n_train=200000, n_val=20000, seed=0):
        rng = np.random.default_rng(seed)
        self.train = fake_pairs(rng, n_train)
        self.val = fake_pairs(rng, n_val)

    def train_and_evaluate(self, params):
        # every hyperopt evaluation starts from an empty Keras session
        keras.backend.clear_session()
        model = create_model(params)
        model.fit(self.train[0], self.train[1], batch_size=512, epochs=int(params["epochs"]), verbose=0)
        val_loss = float(model.evaluate(self.val[0], self.val[1], batch_size=1024, verbose=0))
        return {"loss": val_loss, "status": STATUS_OK, "params": params}

    def search(self, max_evals=100):
        space = {
            "embed_dim": scope.int(hp.quniform("embed_dim", 50, 300, 25)),
            "dense_dim": scope.int(hp.quniform("dense_dim", 25, 325, 25)),
            "l2_lambda": hp.choice("l2_lambda", np.append(np.logspace(-7, -2, 6), 0)),
            "lr": hp.loguniform("lr", np.log(1e-4), np.log(1e-2)),
            "epochs": hp.choice("epochs", [2, 4, 8]),
        }
        trials = Trials()
        best = fmin(self.train_and_evaluate, space, algo=tpe.suggest, max_evals=max_evals, trials=trials)
        return best, sorted(trials.results, key=lambda r: r["loss"])[:5]


if __name__ == "__main__":
    best, top = CitationSearch().search()
    print("best params:", best)
    for result in top:
        print(f"{result['loss']:.4f}", result["params"])
