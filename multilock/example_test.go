package multilock_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/multilock"
)

// ordersServer and stockServer point the example at two servers (here two
// databases of the test server); in a program they would be, say,
// distsync.Options{Addrs: []string{"orders-redis:6379"}} and
// distsync.Options{Addrs: []string{"stock-redis:6379"}}.
var ordersServer, stockServer distsync.Options

// Two locks on two servers, one Client each, taken as one.
func Example() {
	orders, err := distsync.New(ordersServer)
	if err != nil {
		panic(err)
	}
	defer orders.Close()
	stock, err := distsync.New(stockServer)
	if err != nil {
		panic(err)
	}
	defer stock.Close()

	order, _ := orders.Mutex("example-order-1")
	sku, _ := stock.Mutex("example-sku-42")
	both, err := multilock.New([]distsync.Locker{order, sku})
	if err != nil {
		panic(err)
	}
	ctx, err := both.TryLock(context.Background(), time.Second, 0)
	if err != nil {
		panic(err)
	}
	fmt.Println("holding", both.Key())
	_, err = sku.TryLock(context.Background(), 0, 0)
	fmt.Println("another owner gets the sku:", !errors.Is(err, distsync.ErrNotAcquired))

	if err := both.Unlock(ctx); err != nil {
		panic(err)
	}
	fmt.Println(context.Cause(ctx))
	// Output:
	// holding distsync:{example-order-1},distsync:{example-sku-42}
	// another owner gets the sku: false
	// distsync: released
}
