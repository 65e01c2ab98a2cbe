import { type Command, Help, type Option } from 'commander';
import { CliError } from '../exit-codes.js';

/** The hidden command the shell scripts call: `svc __complete <words so far…> <current word>`. */
export const COMPLETE_COMMAND = '__complete';

// Each script asks `svc` itself for the candidates, so they always match the installed version's
// commands (which come from the spec) without regenerating anything.
const SCRIPTS: Readonly<Record<string, string>> = {
  bash: `# svc completion for bash: add to ~/.bashrc:  source <(svc completion bash)
_svc_complete() {
  local IFS=$'\\n'
  COMPREPLY=($(svc ${COMPLETE_COMMAND} -- "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o default -F _svc_complete svc
`,
  zsh: `#compdef svc
# svc completion for zsh: add to ~/.zshrc:  source <(svc completion zsh)
_svc() {
  local -a candidates
  candidates=("\${(@f)$(svc ${COMPLETE_COMMAND} -- "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  compadd -a candidates
}
compdef _svc svc
`,
  fish: `# svc completion for fish: svc completion fish > ~/.config/fish/completions/svc.fish
complete -c svc -f -a '(svc ${COMPLETE_COMMAND} -- (commandline -opc)[2..-1] (commandline -ct) 2>/dev/null)'
`,
};

function findOption(command: Command, flag: string): Option | undefined {
  for (let at: Command | null = command; at; at = at.parent)
    for (const option of at.options) if (option.long === flag || option.short === flag) return option;
  return undefined;
}

/**
 * The completions of the last word of `words` (everything after `svc`): subcommands (and aliases)
 * of the command the earlier words name, its options and the global ones when the word starts with
 * `-`, or an option's choices right after it. Hidden commands (old names) are not offered.
 *
 * @example
 * completions(program, ['comp']); // ['completion', 'computers']
 */
export function completions(program: Command, words: readonly string[]): string[] {
  const current = words.at(-1) ?? '';
  const before = words.slice(0, -1);
  let command = program;
  for (let i = 0; i < before.length; i++) {
    const word = before[i] as string;
    if (word.startsWith('-')) {
      const option = findOption(command, word);
      if (option && (option.required || option.optional) && !word.includes('=')) i++; // its value
      continue;
    }
    const sub = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (sub) command = sub;
  }
  const previous = before.at(-1);
  const awaiting = previous?.startsWith('-') ? findOption(command, previous) : undefined;
  if (awaiting && (awaiting.required || awaiting.optional))
    return (awaiting.argChoices ?? []).filter((choice) => choice.startsWith(current));
  const help = new Help();
  if (current.startsWith('-')) {
    const flags = new Set<string>();
    for (let at: Command | null = command; at; at = at.parent)
      for (const option of help.visibleOptions(at)) if (option.long) flags.add(option.long);
    return [...flags].filter((flag) => flag.startsWith(current)).sort();
  }
  return help
    .visibleCommands(command)
    .flatMap((c) => [c.name(), ...c.aliases()])
    .filter((name) => name.startsWith(current) && name !== COMPLETE_COMMAND)
    .sort();
}

/**
 * `svc completion bash|zsh|fish` (prints the script to source) and the hidden `svc __complete` it calls.
 *
 * @example
 * addCompletionCommands(program, io);
 */
export function addCompletionCommands(
  program: Command,
  io: { stdout: { write(text: string): unknown } },
): void {
  program
    .command('completion')
    .description('print the shell completion script: source <(svc completion bash)')
    .argument('<shell>', 'bash, zsh or fish')
    .action((shell: string) => {
      const script = SCRIPTS[shell];
      if (!script)
        throw new CliError(
          'usage',
          'unknown_shell',
          `No completion for "${shell}": choose bash, zsh or fish.`,
        );
      io.stdout.write(script);
    });
  program
    .command(COMPLETE_COMMAND, { hidden: true })
    .argument('[words...]')
    .allowUnknownOption()
    .helpOption(false)
    .action((words: string[] = []) => {
      const found = completions(program, words.length ? words : ['']);
      io.stdout.write(found.length ? `${found.join('\n')}\n` : '');
    });
}
