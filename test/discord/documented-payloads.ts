/**
 * INTERACTION_CREATE payloads exactly as Discord's own API documentation shows them
 * (github.com/discord/discord-api-docs):
 * - `SLASH_COMMAND`: docs/interactions/application-commands — "Slash Commands", sample interaction
 *   payload (the `/cardsearch` "The Gitrog Monster" example);
 * - `MESSAGE_COMMAND`: same page, "Message Commands", example interaction (`context-menu-message-2`);
 * - `BUTTON`: docs/interactions/message-components — the button interaction example (`click_one`).
 * None of them has `entitlements`, `authorizing_integration_owners` or `context`, fields the gateway
 * sends today; older ones lack `application_id` and `version` too. They are data, returned fresh on
 * each call because discord.js and the bot may add to the objects they get.
 */

export function slashCommandExample(): Record<string, any> {
  return {
    type: 2,
    token: 'A_UNIQUE_TOKEN',
    member: {
      user: {
        id: '53908232506183680',
        username: 'Mason',
        avatar: 'a_d5efa99b3eeaa7dd43acca82f5692432',
        discriminator: '1337',
        public_flags: 131141,
      },
      roles: ['539082325061836999'],
      premium_since: null,
      permissions: '2147483647',
      pending: false,
      nick: null,
      mute: false,
      joined_at: '2017-03-13T19:19:14.040000+00:00',
      is_pending: false,
      deaf: false,
    },
    id: '786008729715212338',
    guild_id: '290926798626357999',
    app_permissions: '442368',
    guild_locale: 'en-US',
    locale: 'en-US',
    data: {
      options: [{ type: 3, name: 'cardname', value: 'The Gitrog Monster' }],
      type: 1,
      name: 'cardsearch',
      id: '771825006014889984',
    },
    channel_id: '645027906669510667',
  };
}

export function messageCommandExample(): Record<string, any> {
  return {
    application_id: '775799577604522054',
    channel_id: '772908445358620702',
    data: {
      id: '866818195033292851',
      name: 'context-menu-message-2',
      resolved: {
        messages: {
          '867793854505943041': {
            attachments: [],
            author: {
              avatar: 'a_f03401914fb4f3caa9037578ab980920',
              discriminator: '6538',
              id: '167348773423415296',
              public_flags: 1,
              username: 'ian',
            },
            channel_id: '772908445358620702',
            components: [],
            content: 'some message',
            edited_timestamp: null,
            embeds: [],
            flags: 0,
            id: '867793854505943041',
            mention_everyone: false,
            mention_roles: [],
            mentions: [],
            pinned: false,
            timestamp: '2021-07-22T15:42:57.744000+00:00',
            tts: false,
            type: 0,
          },
        },
      },
      target_id: '867793854505943041',
      type: 3,
    },
    guild_id: '772904309264089089',
    guild_locale: 'en-US',
    app_permissions: '442368',
    id: '867793873336926249',
    locale: 'en-US',
    member: {
      avatar: null,
      deaf: false,
      is_pending: false,
      joined_at: '2020-11-02T20:46:57.364000+00:00',
      mute: false,
      nick: null,
      pending: false,
      permissions: '274877906943',
      premium_since: null,
      roles: ['785609923542777878'],
      user: {
        avatar: 'a_f03401914fb4f3caa9037578ab980920',
        discriminator: '6538',
        id: '167348773423415296',
        public_flags: 1,
        username: 'ian',
      },
    },
    token: 'UNIQUE_TOKEN',
    type: 2,
    version: 1,
  };
}

export function buttonExample(): Record<string, any> {
  return {
    version: 1,
    type: 3,
    token: 'unique_interaction_token',
    message: {
      type: 0,
      tts: false,
      timestamp: '2021-05-19T02:12:51.710000+00:00',
      pinned: false,
      mentions: [],
      mention_roles: [],
      mention_everyone: false,
      id: '844397162624450620',
      flags: 0,
      embeds: [],
      edited_timestamp: null,
      content: 'This is a message with components.',
      components: [{ type: 1, components: [{ type: 2, label: 'Click me!', style: 1, custom_id: 'click_one' }] }],
      channel_id: '345626669114982402',
      author: {
        username: 'Mason',
        public_flags: 131141,
        id: '53908232506183680',
        discriminator: '1337',
        avatar: 'a_d5efa99b3eeaa7dd43acca82f5692432',
      },
      attachments: [],
    },
    member: {
      user: {
        username: 'Mason',
        public_flags: 131141,
        id: '53908232506183680',
        discriminator: '1337',
        avatar: 'a_d5efa99b3eeaa7dd43acca82f5692432',
      },
      roles: ['290926798626357999'],
      premium_since: null,
      permissions: '17179869183',
      pending: false,
      nick: null,
      mute: false,
      joined_at: '2017-03-13T19:19:14.040000+00:00',
      is_pending: false,
      deaf: false,
      avatar: null,
    },
    id: '846462639134605312',
    guild_id: '290926798626357999',
    data: { custom_id: 'click_one', component_type: 2 },
    channel_id: '345626669114982999',
    application_id: '290926444748734465',
  };
}
