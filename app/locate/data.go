package locate

import "fmt"

// DataHint says where a data set of the kind (dataset.Kinds) comes from,
// for an error about one that is not there.
func DataHint(kind string) string {
	switch kind {
	case "mnist":
		return "MNIST ships in the Go module " + gomnist + " (\"go mod download\" in the flycl folder; --data mnist finds it), or give mnist:DIR with the four IDX files"
	case "fashion-mnist":
		return "install Debian's dataset-fashion-mnist (--data fashion-mnist then finds it), or give fashion-mnist:DIR with the four IDX files of github.com/zalandoresearch/fashion-mnist"
	case "cifar10", "cifar100", "cub":
		return fmt.Sprintf("\"flycl-lab fetch %s\" downloads it (into data/)", kind)
	case "folder":
		return "give a folder, .tar or .tar.gz of <class>/<image> or <split>/<class>/<image> files"
	}
	return "see \"flycl help run\" for the data set kinds"
}
