package plait

// HoldMax lets the tests wait exactly as long as a task claimed ahead may.
const HoldMax = holdMax

// ShutdownWriteWindow lets the tests bound how long a stopping Run may
// take.
const ShutdownWriteWindow = shutdownWriteWindow
