import type { InputAction } from './actions.js';
import { type Cursor, type Desktop, scaledSize } from './desktop.js';
import { simulatedScreenPng } from './png.js';

/**
 * The simulated driver's desktop (it has no machine, so no screen): a fixed picture of the screen's
 * size, and input that is checked and echoed, the pointer following moves, clicks, drags and scrolls
 * (`simulated: true`); nothing is typed or clicked anywhere. Pointers are kept per computer in this
 * process.
 *
 * @example
 * const desktop = new SimulatedDesktop();
 */
export class SimulatedDesktop implements Desktop {
  private readonly pointers = new Map<string, Cursor>();
  private readonly pictures = new Map<string, Uint8Array>();

  async screenshot(
    computer: Parameters<Desktop['screenshot']>[0],
    scale: Parameters<Desktop['screenshot']>[1],
  ): ReturnType<Desktop['screenshot']> {
    const size = scaledSize(computer.screen, scale);
    const key = `${size.width}x${size.height}`;
    let png = this.pictures.get(key);
    if (!png) {
      png = simulatedScreenPng(size.width, size.height);
      if (this.pictures.size < 16) this.pictures.set(key, png);
    }
    return { png, screen: computer.screen, cursor: this.cursor(computer) };
  }

  async input(
    computer: Parameters<Desktop['input']>[0],
    actions: readonly InputAction[],
  ): ReturnType<Desktop['input']> {
    let cursor = this.cursor(computer);
    for (const action of actions) {
      if (action.type === 'drag') cursor = { x: action.to_x ?? cursor.x, y: action.to_y ?? cursor.y };
      else if (action.x !== undefined && action.y !== undefined) cursor = { x: action.x, y: action.y };
    }
    this.pointers.set(computer.id, cursor);
    return { applied: actions.length, cursor, simulated: true };
  }

  private cursor(computer: Parameters<Desktop['input']>[0]): Cursor {
    return (
      this.pointers.get(computer.id) ?? {
        x: Math.floor(computer.screen.width / 2),
        y: Math.floor(computer.screen.height / 2),
      }
    );
  }
}
