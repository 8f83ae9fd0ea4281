#!/usr/bin/env bash
# Runs the attack tests alone (make test-security): each makes an attack
# from a security review (docs/security.md, "Threats, routes and
# controls") and passes only if the attack fails. make test runs them
# too; CI runs them again on their own so that the log names each attack
# and its outcome.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}

tests=(
  # Coordinator links and internal routes.
  TestNodeAddressNeedsAPeerCertificate
  TestNoCredentialReachesAnUnverifiedCoordinator
  TestForwardedRequestsAreNeverPeerCalls
  TestForwardTransportVerifiesLeaderIdentity
  TestLoopbackRaftRefusesWhoeverLacksTheClusterKey
  TestClusterKeyStartChecks
  TestReadClusterKeyRefuses
  TestDevListensOnItsHTTPPortAlone
  TestTaskCannotReachALocalRaftPort
  TestEnrollmentSpoofingFromAnUntrustedPeer
  TestCoordinatorTrustsNoProxyByDefault
  TestDerivedPeerVerifiesOnlyUnderItsKey
  TestRaftRefusesUnauthenticatedPeers
  TestRaftSilentPeerIsDropped
  # Routes, quotas, the HTTP edge and the CLI.
  TestRouteCredentialMatrix
  TestArtifactByteQuotaPerCredential
  TestArtifactRepairRoutesTakeOnlyACoordinator
  'TestFinding.*'
  TestEscapeControls
  # Snapshots, peers, config files, GPU binding.
  TestRestoreRefusesContradictions
  TestEveryFlippedByteIsRefused
  TestApplyRefusesInsteadOfPanicking
  TestAddPeerRefusesBadAddresses
  TestPeersJSONRecoversALostQuorum
  TestConfigWithSecretMustBePrivate
  TestApprovalBindsWhatPlacementTrusts
  # The task sandbox (as root; they skip, saying why, elsewhere).
  'TestSandbox.*'
  TestCgroupV2OnAMountedHierarchy
  TestIsolatedTaskReachesNoLocalPort
  TestPluginInheritsNoDescriptors
  TestTaskCannotReadWorkerCredential
  TestTaskSeesNoAgentSecrets
  TestTaskOpensOnlyTheGPUsItWasGiven
  TestFencedDevices
)
pkgs=(./coordinator/ ./coordinator/httpapi/ ./coordinator/state/ ./coordinator/fsm/ ./coordinator/cluster/ ./cmd/gpulayer/ ./internal/certs/
  ./plugins/exec/ ./agent/ ./agent/runner/ ./agent/pluginhost/ ./integration/)

regex="^($(IFS='|'; echo "${tests[*]}"))\$"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
"$GO" test -race -count=1 -run "$regex" -v "${pkgs[@]}" >"$out" 2>&1 || status=$?
# The verdict of every attack test and package, not their logs.
grep -E '^(--- (PASS|FAIL)|ok |FAIL|PASS$)' "$out" || true
if [ "$status" -ne 0 ]; then
  echo "attack tests failed; the whole output:"
  cat "$out"
fi
passed=$(grep -c '^--- PASS' "$out" || true)
failed=$(grep -c '^--- FAIL' "$out" || true)
echo "security: $passed passed, $failed failed"
exit "$status"
