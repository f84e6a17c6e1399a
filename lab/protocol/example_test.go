package protocol_test

import (
	"fmt"

	"github.com/flycl/flycl/lab/protocol"
)

// The CIFAR-100 order of the Fly-CL reference code (Python's
// random.seed(1993); random.sample(range(100), 100)), cut into 10 tasks,
// and the PILOT toolbox order numpy.random.seed(1993);
// numpy.random.permutation(10) (values as NumPy prints them).
func ExampleClassOrder() {
	order, _ := protocol.ClassOrder(protocol.OrderFlyCL, 100, 1993)
	tasks, _ := protocol.EqualTasks(order, 10)
	fmt.Println(tasks[0])
	pilot, _ := protocol.ClassOrder(protocol.OrderPILOT, 10, 1993)
	fmt.Println(pilot)
	// Output:
	// [61 79 33 57 4 14 21 42 44 19]
	// [4 2 7 6 0 3 5 8 9 1]
}
