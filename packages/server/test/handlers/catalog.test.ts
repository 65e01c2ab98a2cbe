import { afterAll, beforeAll, expect, test } from 'vitest';
import { SimulatedDriver } from '../../src/computers/simulated-driver.js';
import type { Team, TestApp } from '../support/app.js';
import { openTestApp } from '../support/app.js';
import { describeEngines } from '../support/databases.js';

// GET /images says, per image, whether this deployment's driver can run it (`driver`, `available`).
// The Docker driver's answers are in computers-debian-docker.test.ts and operations/docker/driver.test.ts.
describeEngines(
  'handlers: the image catalogue and its availability',
  (engine) => {
    let simulated: TestApp;
    let standIn: TestApp;
    let team: Team;
    beforeAll(async () => {
      simulated = await openTestApp(engine);
      team = await simulated.team();
      // A driver that cannot say whether it runs an image (no imageAvailable): none is promised.
      const driver = new SimulatedDriver({ stepMs: 10 });
      standIn = await openTestApp(engine, {
        app: {
          driver: {
            name: 'docker',
            run: (...args) => driver.run(...args),
            exec: (...args) => driver.exec(...args),
          },
        },
      });
    });
    afterAll(async () => {
      await simulated.close();
      await standIn.close();
    });
    const images = async (t: TestApp, token: string) => {
      const answer = await t.call('GET', '/v1/images?limit=200', { token });
      expect(answer.status).toBe(200);
      return answer.body.images as { name: string; driver: string; available: boolean }[];
    };

    test('the simulated driver: every image is there, available, and says it is simulated', async () => {
      const listed = await images(simulated, team.viewer.token);
      expect(listed.map((image) => image.name).sort()).toEqual([
        'busybox',
        'debian-13',
        'debian-13-desktop',
        'ubuntu-2404',
      ]);
      for (const image of listed) expect(image).toMatchObject({ driver: 'simulated', available: true });
      // Only the desktop has a screen (design §18).
      expect(listed.filter((image) => (image as { display?: boolean }).display).map((i) => i.name)).toEqual([
        'debian-13-desktop',
      ]);
    });

    test('a driver that cannot tell: every image is listed, none shown available', async () => {
      const other = await standIn.team();
      const listed = await images(standIn, other.viewer.token);
      expect(listed).toHaveLength(4);
      for (const image of listed) expect(image).toMatchObject({ driver: 'docker', available: false });
    });
  },
  ['pglite'],
);
