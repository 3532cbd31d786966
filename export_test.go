package plait

// HoldMax lets the tests wait exactly as long as a task claimed ahead may.
const HoldMax = holdMax
