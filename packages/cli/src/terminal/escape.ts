// The detach escape of `svc computers shell`: `Ctrl-]` then `d`, as telnet's escape character starts
// its commands. Every other byte goes to the program; `Ctrl-]` twice sends one; `Ctrl-]` then any other
// byte sends both, so nothing typed is lost.

/** `Ctrl-]` (GS, 0x1d): the escape byte. */
export const ESCAPE = 0x1d;

/**
 * A reader of typed bytes that finds `Ctrl-]` `d` in them, across chunks: `feed` answers the bytes to
 * send on and whether the user asked to detach (the bytes after the escape are then dropped).
 *
 * @example
 * const detacher = detachEscape();
 * detacher.feed(Uint8Array.of(0x61, 0x1d)); // { pass: [0x61], detach: false }
 * detacher.feed(Uint8Array.of(0x64)); // { pass: [], detach: true }
 */
export function detachEscape() {
  let armed = false;
  return {
    feed(bytes: Uint8Array): { pass: Uint8Array; detach: boolean } {
      const pass: number[] = [];
      for (const byte of bytes) {
        if (!armed) {
          if (byte === ESCAPE) armed = true;
          else pass.push(byte);
          continue;
        }
        armed = false;
        if (byte === 0x64 || byte === 0x44) return { pass: Uint8Array.from(pass), detach: true };
        if (byte === ESCAPE) pass.push(ESCAPE);
        else pass.push(ESCAPE, byte);
      }
      return { pass: Uint8Array.from(pass), detach: false };
    },
  };
}
