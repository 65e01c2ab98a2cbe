import { expect, test } from 'vitest';
import { hashPassword, verifyPassword } from '../../src/identity/auth/password.js';

test('a hash verifies its password and nothing else', async () => {
  const stored = await hashPassword('correct horse battery staple');
  expect(stored).toMatch(/^scrypt\$131072\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
  expect(await verifyPassword('correct horse battery staple', stored)).toBe(true);
  expect(await verifyPassword('correct horse battery stapl', stored)).toBe(false);
  expect(await hashPassword('correct horse battery staple')).not.toBe(stored); // salted
});

test.each(['', 'plain', 'bcrypt$1$2$3$4$5', 'scrypt$1024$8$1$'])(
  'a malformed stored hash %j never verifies',
  async (stored) => {
    expect(await verifyPassword('x', stored)).toBe(false);
  },
);
