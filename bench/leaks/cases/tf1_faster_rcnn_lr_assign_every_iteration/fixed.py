"""TF1 Faster R-CNN solver: the learning rate is set with a new tf.assign op on every iteration

Source: https://github.com/CharlesShang/TFFRCNN/issues/4
Style: tf1-session
Kind: TF1 graph ops built inside the session loop: `sess.run(tf.assign(lr, ...))` adds a new assign op (and a constant) to the default graph at every iteration, so the graph grows and each 10k iterations take longer than the previous ones
"""
import os
import time

import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()


class SolverWrapper:
    def __init__(self, net, roidb_layer, output_dir, cfg):
        self.net = net
        self.data_layer = roidb_layer
        self.output_dir = output_dir
        self.cfg = cfg
        self.saver = tf.train.Saver(max_to_keep=100)

    def snapshot(self, sess, it):
        os.makedirs(self.output_dir, exist_ok=True)
        path = os.path.join(self.output_dir, f"VGGnet_fast_rcnn_iter_{it + 1}.ckpt")
        self.saver.save(sess, path)
        print(f"Wrote snapshot to: {path}")

    def build_losses(self):
        rpn_cls = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            logits=self.net.rpn_cls_score, labels=self.net.rpn_labels))
        rpn_box = tf.reduce_mean(tf.reduce_sum(tf.abs(self.net.rpn_bbox_pred - self.net.rpn_bbox_targets), axis=1))
        cls = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            logits=self.net.cls_score, labels=self.net.labels))
        box = tf.reduce_mean(tf.reduce_sum(tf.abs(self.net.bbox_pred - self.net.bbox_targets), axis=1))
        return rpn_cls, rpn_box, cls, box

    def train_model(self, sess, max_iters):
        rpn_cls, rpn_box, cls, box = self.build_losses()
        total = rpn_cls + rpn_box + cls + box
        lr = tf.Variable(self.cfg["LEARNING_RATE"], trainable=False)
        momentum = self.cfg["MOMENTUM"]
        train_op = tf.train.MomentumOptimizer(lr, momentum).minimize(total)
        lr_value = tf.placeholder(tf.float32, shape=[], name="lr_value")
        set_lr = tf.assign(lr, lr_value)
        sess.run(tf.global_variables_initializer())
        self.net.load_pretrained(sess, self.cfg["PRETRAINED"])

        sess.graph.finalize()

        last_snapshot = -1
        tic = time.time()
        sess.run(set_lr, {lr_value: self.cfg["LEARNING_RATE"]})
        for it in range(max_iters):
            if it == self.cfg["STEPSIZE"]:
                sess.run(set_lr, {lr_value: self.cfg["LEARNING_RATE"] * self.cfg["GAMMA"]})
            blobs = self.data_layer.forward()
            feed = {self.net.data: blobs["data"], self.net.im_info: blobs["im_info"],
                    self.net.gt_boxes: blobs["gt_boxes"], self.net.keep_prob: 0.5}
            values = sess.run([rpn_cls, rpn_box, cls, box, train_op], feed_dict=feed)
            if (it + 1) % self.cfg["DISPLAY"] == 0:
                elapsed = (time.time() - tic) / self.cfg["DISPLAY"]
                tic = time.time()
                print(f"iter {it + 1}/{max_iters}: total {sum(values[:4]):.4f} rpn_cls {values[0]:.4f} "
                      f"rpn_box {values[1]:.4f} cls {values[2]:.4f} box {values[3]:.4f}, lr {sess.run(lr):.6f}, "
                      f"{elapsed:.3f}s/iter")
            if (it + 1) % self.cfg["SNAPSHOT_ITERS"] == 0:
                last_snapshot = it
                self.snapshot(sess, it)
        if last_snapshot != max_iters - 1:
            self.snapshot(sess, max_iters - 1)


def train_net(net, roidb_layer, output_dir, cfg, max_iters=70000):
    config = tf.ConfigProto(allow_soft_placement=True)
    config.gpu_options.allow_growth = True
    with tf.Session(config=config) as sess:
        sw = SolverWrapper(net, roidb_layer, output_dir, cfg)
        sw.train_model(sess, max_iters)
        print("done solving")


DEFAULT_CFG = {"LEARNING_RATE": 0.001, "MOMENTUM": 0.9, "GAMMA": 0.1, "STEPSIZE": 50000,
               "DISPLAY": 10, "SNAPSHOT_ITERS": 5000, "PRETRAINED": "VGG_imagenet.npy"}
