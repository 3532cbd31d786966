package store

// FairClaimer is the capability of claiming by shares: a store that
// implements it honours [TaskClaimParams].Shares.
type FairClaimer interface {
	// ClaimsByShares does nothing; its presence says that the store honours
	// TaskClaimParams.Shares.
	ClaimsByShares()
}
