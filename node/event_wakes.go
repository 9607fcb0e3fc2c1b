package node

import "context"

// wakeJobsOnEvents wakes the job runner whenever this process committed
// client API events: a notification's Web Push job (store.QueuePush) is
// committed with its event, so it goes out at once rather than at the
// runner's next poll. Other processes' jobs wake it through the queue
// runner's Listen.
func (n *Node) wakeJobsOnEvents(ctx context.Context) {
	wakes, stop := n.DB.APIEventWakes()
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-wakes:
			n.Jobs.Wake()
		}
	}
}
