package store

// What a ready task waits for when the fleet, not the store, holds it
// back. A store answers [TaskInstance.WaitingFor] from what it keeps
// ([WaitingForCapability], [WaitingForHandler], [WaitingForLimit]); plait's
// Scheduler adds these when it reads a run, from the paused queues and
// the live nodes ([NodeStore]).

// WaitingForQueuePrefix opens the [TaskInstance.WaitingFor] of a ready
// task held back by its queue: [WaitingForQueuePaused] and
// [WaitingForQueueNotServed].
const WaitingForQueuePrefix = "queue "

// WaitingForHandlerPrefix opens the [TaskInstance.WaitingFor] of a ready
// task waiting for a process with its handler ([WaitingForHandler]).
const WaitingForHandlerPrefix = "handler "

// WaitingForQueuePaused returns the [TaskInstance.WaitingFor] of a ready
// task whose queue is paused: "queue <name> paused".
func WaitingForQueuePaused(queue string) string {
	return WaitingForQueuePrefix + queue + " paused"
}

// WaitingForQueueNotServed returns the [TaskInstance.WaitingFor] of a
// ready task whose queue no live node claims from (a typo in the queue's
// name, or workers not deployed): "queue <name> not served".
func WaitingForQueueNotServed(queue string) string {
	return WaitingForQueuePrefix + queue + " not served"
}
