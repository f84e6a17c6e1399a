// Package testimages draws pictures for the tests that run where no
// photos are (a fresh clone, without ../shared): a few patterns that a
// pretrained backbone (the MobileNetV2 and SqueezeNet weights built into
// flycl) tells apart at a glance, each picture laid out at random and
// every pixel jittered, so that no two are alike. Only tests import it.
package testimages
