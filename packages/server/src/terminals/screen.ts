// The screen of a terminal (design §17, `GET …/terminals/{terminal}/screen`): its kept output replayed
// into xterm.js's emulator without a DOM, at the terminal's size, read back as rows of text and the
// cursor. @xterm/headless 6 is CommonJS only: its default export holds `Terminal` (a named ESM import
// fails under Node).
import type { Schema } from '@svc/contract';
import xterm from '@xterm/headless';

/**
 * Renders `output` (the bytes a program wrote, in order) on a `cols` × `rows` screen.
 *
 * @example
 * await renderScreen([new TextEncoder().encode('$ echo hi\r\nhi\r\n$ ')], 80, 3);
 * // { cols: 80, rows: 3, lines: ['$ echo hi', 'hi', '$'], cursor: { x: 2, y: 2 } }
 */
export async function renderScreen(
  output: readonly Uint8Array[],
  cols: number,
  rows: number,
): Promise<Schema<'TerminalScreen'>> {
  const terminal = new xterm.Terminal({ cols, rows, allowProposedApi: true, scrollback: 0 });
  try {
    for (const bytes of output) await new Promise<void>((resolve) => terminal.write(bytes, resolve));
    const buffer = terminal.buffer.active;
    const lines: string[] = [];
    for (let y = 0; y < rows; y++)
      lines.push((buffer.getLine(buffer.viewportY + y)?.translateToString(true) ?? '').trimEnd());
    return {
      cols,
      rows,
      lines,
      cursor: { x: Math.min(buffer.cursorX, cols), y: Math.min(buffer.cursorY, rows - 1) },
    };
  } finally {
    terminal.dispose();
  }
}
