import { DEFAULT_SCREEN } from '../../computers/screen-limits.js';
import type { Queryable } from '../../platform/db/database.js';
import { ApiError, invalidArgument } from '../../platform/errors.js';
import type { ScreenSize } from '../actions.js';

// Which computers have a screen, and its size (the columns of migration 021): an image's `display`,
// a computer's `screen_width` and `screen_height`, set at create for an image with a display only.

/**
 * The screen of a computer, or 409 `invalid_state` (`reason: no_display`) when its image has none.
 *
 * @example
 * const screen = await screenOf(ctx.db, computer); // { width: 1280, height: 800 }
 */
export async function screenOf(
  db: Queryable,
  computer: { id: string; name: string; image: string },
): Promise<ScreenSize> {
  const { rows } = await db.query<{ display: boolean; width: number | null; height: number | null }>(
    `SELECT i.display, c.screen_width AS width, c.screen_height AS height
       FROM computers c JOIN images i ON i.name = c.image WHERE c.id = $1`,
    [computer.id],
  );
  const row = rows[0];
  if (!row?.display)
    throw new ApiError(
      'invalid_state',
      `computer ${computer.name} has no screen: its image ${computer.image} has no display (GET /images, display)`,
      { details: { reason: 'no_display' } },
    );
  return { width: row.width ?? DEFAULT_SCREEN.width, height: row.height ?? DEFAULT_SCREEN.height };
}

/**
 * At create, in the create's transaction: gives a computer of an image with a display the screen it
 * asks for, and refuses a `screen` for any other image (400 on `screen`). A create that asks for none
 * costs no statement: a display computer without a size of its own has the default one (`screenOf`,
 * and the image's entry script when the Docker driver passes no size).
 *
 * @example
 * await setScreenAtCreate(ctx.db, computer, ctx.body.screen);
 */
export async function setScreenAtCreate(
  db: Queryable,
  computer: { id: string; image: string },
  asked: ScreenSize | undefined,
): Promise<ScreenSize | undefined> {
  if (!asked) return undefined;
  const { rows } = await db.query<{ display: boolean }>('SELECT display FROM images WHERE name = $1', [
    computer.image,
  ]);
  if (!rows[0]?.display)
    throw invalidArgument([
      {
        field: 'screen',
        description: `the image ${computer.image} has no display, so its computers have no screen (GET /images, display)`,
      },
    ]);
  const screen = asked;
  await db.query('UPDATE computers SET screen_width = $2, screen_height = $3 WHERE id = $1', [
    computer.id,
    screen.width,
    screen.height,
  ]);
  return { width: screen.width, height: screen.height };
}
