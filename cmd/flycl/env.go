package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flycl/flycl/app/locate"
	"github.com/flycl/flycl/cmd/internal/cli"
)

// The names this package's commands use for cli's.
const (
	envORTLib          = cli.EnvORTLib
	envModels          = cli.EnvModels
	defaultCalibMethod = cli.DefaultCalibMethod
)

// resolver is the locate.Resolver of the flags given in fs (cli.Resolver).
func resolver(fs *pflag.FlagSet) locate.Resolver { return cli.Resolver(fs) }

// environmentHelp is the help topic "flycl help environment".
func environmentHelp() *cobra.Command {
	var b strings.Builder
	b.WriteString(`flycl resolves every path it needs in one place: the flag when given,
else the environment variable, else the default below. Library packages
take these paths explicitly and read no environment.

`)
	for _, s := range locate.Settings() {
		flag := ""
		if s.Flag != "" {
			flag = " (flag " + s.Flag + " wins)"
		}
		fmt.Fprintf(&b, "%s%s\n    %s\n    default: %s\n\n", s.Env, flag, s.Doc, s.Default)
	}
	b.WriteString(`OpenBLAS reads its own variables (OPENBLAS_NUM_THREADS, OPENBLAS_CORETYPE);
"flycl info" prints those that are set.`)
	return &cobra.Command{Use: "environment", Short: "The FLYCL_* environment variables and the defaults they override", Long: b.String()}
}

// weightsHelp is the help topic "flycl help weights": the built-in
// backbone weights, their attribution (NOTICE) and licence (LICENSE), which
// must travel with every copy of the binary.
func weightsHelp() *cobra.Command {
	return &cobra.Command{Use: "weights", Short: "The backbone weights built into flycl: where they come from and their licence",
		Long: `flycl carries ImageNet-pretrained weights of MobileNetV2 1.0 (--backbone
mobilenetv2, the default for images) and SqueezeNet 1.1 (--backbone squeezenet)
inside the binary; --backbone NAME:DIR or ` + envModels + ` use other copies
("flycl help environment"). Their notice and licence follow.

` + locate.BuiltinNotice()}
}
