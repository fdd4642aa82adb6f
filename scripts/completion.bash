# SPDX-License-Identifier: GPL-2.0
# bash completion for xdpreplay, installed as share/bash-completion/completions/xdpreplay.
# Commands and options come from the binary's own --help (one source: nothing to keep in step);
# interfaces for -i/--iface, files for the options that take one.
_xdpreplay() {
	local cur prev cmd sub words_help
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	if [ "$COMP_CWORD" -eq 1 ]; then
		mapfile -t COMPREPLY < <(compgen -W "$("${COMP_WORDS[0]}" --help 2>/dev/null |
			sed -n '/^Commands:/,/^$/s/^  \([a-z]*\) .*/\1/p') --help --version" -- "$cur")
		return
	fi
	cmd=${COMP_WORDS[1]}
	sub=
	[ "$cmd" = lorawan ] && [ "$COMP_CWORD" -gt 2 ] && sub=${COMP_WORDS[2]}
	case $prev in
	-i | --iface)
		mapfile -t COMPREPLY < <(compgen -W "$(ls /sys/class/net 2>/dev/null)" -- "$cur")
		return ;;
	--json | --csv | --svg | --html | --json-stream | --latency-spectrum | -o | --output | \
		--body | --request | --names | --queries | --token-file | \
		--witness-token-file | --ready-file | --schedule | --fleet | --out)
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		return ;;
	esac
	if [[ $cur == -* ]]; then
		words_help=$("${COMP_WORDS[0]}" "$cmd" $sub --help 2>/dev/null | grep -oE -- '(^| |\[)--?[A-Za-z][A-Za-z0-9-]*' |
			tr -d ' [' | sort -u)
		mapfile -t COMPREPLY < <(compgen -W "$words_help" -- "$cur")
		return
	fi
	if [ "$cmd" = lorawan ] && [ "$COMP_CWORD" -eq 2 ]; then
		mapfile -t COMPREPLY < <(compgen -W "fleet send" -- "$cur")
	elif [ "$cmd" = gen ] && [ "$COMP_CWORD" -eq 2 ]; then
		mapfile -t COMPREPLY < <(compgen -W "$("${COMP_WORDS[0]}" gen --help 2>/dev/null |
			sed -n '/^PROTO:/,/^$/s/^  \([a-z]*\) .*/\1/p')" -- "$cur")
	else
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
	fi
}
complete -F _xdpreplay xdpreplay
