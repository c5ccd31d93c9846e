"""Options that come between a program and its subcommand (``git -C DIR``, ``kubectl -n NS``).

Deny rules compare commands with these taken out, and "always allow" keeps them as written.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GlobalOptions:
    """A program's options that come before its subcommand."""

    flags: frozenset[str]
    valued: frozenset[str]


def _globals(flags: str, valued: str) -> GlobalOptions:
    return GlobalOptions(frozenset(flags.split()), frozenset(valued.split()))


GLOBAL_OPTIONS: dict[str, GlobalOptions] = {
    "git": _globals(
        "--no-pager -p --paginate -P --bare --no-replace-objects --literal-pathspecs "
        "--glob-pathspecs --noglob-pathspecs --icase-pathspecs --no-optional-locks "
        "--no-lazy-fetch --no-advice --html-path --man-path --info-path --exec-path "
        "--version --help -h -v",
        "-C -c --git-dir --work-tree --namespace --super-prefix --config-env --list-cmds"),
    "docker": _globals("-D --debug --tls --tlsverify -v --version",
                       "--config -c --context -H --host -l --log-level --tlscacert "
                       "--tlscert --tlskey"),
    "podman": _globals("--debug --remote -r", "--connection -c --url --identity --log-level "
                       "--root --runroot --storage-driver --cgroup-manager"),
    "kubectl": _globals("--insecure-skip-tls-verify --match-server-version -v",
                        "-n --namespace --context --cluster --kubeconfig --user -s --server "
                        "--token --as --as-group --request-timeout --certificate-authority "
                        "--client-certificate --client-key --tls-server-name --cache-dir "
                        "--profile --profile-output"),
    "helm": _globals("--debug", "-n --namespace --kube-context --kubeconfig --registry-config "
                     "--repository-config --repository-cache"),
    "npm": _globals("-g --global -s --silent -q --quiet -d --loglevel=silly --no-color "
                    "--offline --prefer-offline -ws --workspaces -y --yes",
                    "--prefix -C -w --workspace --loglevel --userconfig --cache --registry"),
    "pnpm": _globals("-r --recursive -s --silent -g --global", "-C --dir --filter -F -w "
                     "--workspace-root --loglevel"),
    "yarn": _globals("-s --silent --offline --verbose", "--cwd --cache-folder --modules-folder"),
    "cargo": _globals("-q --quiet -v --verbose --frozen --locked --offline",
                      "-C -Z --config --color --manifest-path"),
    "terraform": _globals("-version -help", "-chdir"),
    "systemctl": _globals("--user --system --no-pager -q --quiet --no-block --now",
                          "-H --host -M --machine"),
    "gh": _globals("", "-R --repo"),
    "pip": _globals("--isolated -v --verbose -q --quiet --no-input --disable-pip-version-check "
                    "--no-color --require-virtualenv --no-cache-dir --debug",
                    "--python --proxy --retries --timeout --exists-action --trusted-host "
                    "--cert --client-cert --cache-dir --log --use-feature --use-deprecated "
                    "--root-user-action --keyring-provider"),
    "pip3": _globals("--isolated -v -q --no-input --disable-pip-version-check --no-color "
                     "--no-cache-dir", "--python --proxy --cache-dir --log"),
    "uv": _globals("-q --quiet -v --verbose --offline --no-cache --frozen --locked",
                   "--directory --project --cache-dir --python -p --config-file"),
    "poetry": _globals("-q --quiet -v -vv -vvv --no-interaction -n --no-ansi --ansi",
                       "-C --directory -P --project"),
}
