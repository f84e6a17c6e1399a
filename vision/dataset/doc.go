// Package dataset reads the image data sets Fly-CL is evaluated on, in the
// layouts users actually have (CIFAR, CUB, image folders and archives,
// MNIST IDX), into images or, for the small grey-scale sets, directly into
// pixel features. A data set is named by a Spec ("kind:path", parsed once
// by ParseSpec), which opens it and gives the key of its content for
// caches.
package dataset
