#!/usr/bin/env bash
# Runs a command with a real, private OS keychain: its own D-Bus session and an unlocked gnome-keyring in a
# temporary HOME, so tests never touch the developer's own keychain and leave nothing behind.
set -euo pipefail
if ! command -v dbus-run-session >/dev/null || ! command -v gnome-keyring-daemon >/dev/null; then
  echo "with-keychain: dbus-run-session and gnome-keyring-daemon are needed for the keychain tests." >&2
  echo "with-keychain: on Debian/Ubuntu: sudo apt-get install dbus gnome-keyring libsecret-1-dev libsecret-tools" >&2
  exit 2
fi
test_home=$(mktemp -d "${TMPDIR:-/tmp}/flowsync-test-home.XXXXXX")
trap 'rm -rf "$test_home"' EXIT
export FLOWSYNC_TEST_HOME="$test_home"
exec dbus-run-session -- env HOME="$test_home" XDG_CONFIG_HOME="$test_home/.config" \
  XDG_DATA_HOME="$test_home/.local/share" XDG_CACHE_HOME="$test_home/.cache" \
  sh -c 'printf pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null && exec "$@"' sh "$@"
