import Foundation
import PackagePlugin

/// Writes `BuildInfo.swift` (`let buildCommit = "…"`) for the `blescope` target before every build, so that
/// `blescope --version` names the commit it was built from.
///
/// The commit comes from `git` in the package directory (12 hex digits, `-dirty` when tracked files differ from it),
/// else from `.git/HEAD` read directly (where git cannot run, e.g. the macOS plugin sandbox), else `unknown` (a source
/// tarball). This works in a fresh clone, in CI and in a worktree alike; nothing is committed or kept outside `.build`.
/// The file is rewritten only when the text changes, so an unchanged commit recompiles nothing.
@main
struct BuildInfo: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appending(path: "generated")
        return [
            .prebuildCommand(
                displayName: "Writing the commit blescope is built from",
                executable: URL(filePath: "/bin/sh"),
                arguments: ["-c", Self.script, "build-info", context.package.directoryURL.path(), output.path()],
                outputFilesDirectory: output)
        ]
    }

    /// `$1` the package directory, `$2` the output directory.
    static let script = #"""
        dir="$1"; out="$2"; mkdir -p "$out"
        commit=$(git -C "$dir" rev-parse --short=12 HEAD 2>/dev/null) || commit=""
        if [ -n "$commit" ]; then
          git -C "$dir" diff --quiet HEAD -- 2>/dev/null || commit="$commit-dirty"
        else
          gitdir="$dir/.git"
          if [ -f "$gitdir" ]; then gitdir=$(sed -n 's/^gitdir: //p' "$gitdir"); fi
          head=$(cat "$gitdir/HEAD" 2>/dev/null) || head=""
          case "$head" in
            "ref: "*) ref=${head#ref: }
                      commit=$(cat "$gitdir/$ref" 2>/dev/null || sed -n "s| $ref\$||p" "$gitdir/packed-refs" 2>/dev/null) ;;
            *) commit=$head ;;
          esac
          commit=$(printf '%.12s' "$commit")
        fi
        [ -n "$commit" ] || commit=unknown
        text="/// Written by the BuildInfo plugin (Plugins/BuildInfo) before each build.
        let buildCommit = \"$commit\""
        [ "$(cat "$out/BuildInfo.swift" 2>/dev/null)" = "$text" ] || printf '%s\n' "$text" > "$out/BuildInfo.swift"
        """#
}
