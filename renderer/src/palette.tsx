// The command palette (cmdk): Ctrl/Cmd+Shift+P anywhere, fuzzy-filtered commands grouped as VS Code
// groups them; Enter runs one, Escape closes. Disabled commands stay listed with the reason.
import { Command } from 'cmdk';
import { useMemo } from 'react';
import { useApp } from './store.js';
import { buildCommands } from './commands.js';

export function CommandPalette() {
  const open = useApp((s) => s.paletteOpen);
  const setPalette = useApp((s) => s.setPalette);
  // Rebuilt each time it opens (the commands depend on the state at that moment).
  const commands = useMemo(() => (open ? buildCommands() : []), [open]);
  const groups = [...new Set(commands.map((c) => c.group))];
  return (
    <Command.Dialog open={open} onOpenChange={setPalette} label="Command palette" className="palette" overlayClassName="palette-overlay" contentClassName="palette-content" data-testid="palette">
      <Command.Input placeholder="Type a command: run, stop, compare, export, open task…" data-testid="palette-input" autoFocus />
      <Command.List className="palette-list">
        <Command.Empty>No command matches.</Command.Empty>
        {groups.map((g) => (
          <Command.Group key={g} heading={g}>
            {commands.filter((c) => c.group === g).map((c) => (
              <Command.Item
                key={c.id}
                value={`${c.label} ${c.id}`}
                disabled={!!c.disabled}
                data-testid="palette-item"
                data-command={c.id}
                onSelect={() => {
                  setPalette(false);
                  void c.run();
                }}
              >
                <span>{c.label}</span>
                {c.disabled ? <span className="muted small"> — {c.disabled}</span> : c.hint ? <kbd>{c.hint}</kbd> : null}
              </Command.Item>
            ))}
          </Command.Group>
        ))}
      </Command.List>
    </Command.Dialog>
  );
}
