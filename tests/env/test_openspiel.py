"""``python_gin_arena`` under OpenSpiel's own checks and algorithms.

OpenSpiel's ``random_sim_test`` (with serialization), its MCTS and IS-MCTS
bots through ``evaluate_bots``, and ``resample_from_infostate`` held to two
properties: the seat cannot tell the resample from the state (same
information state string and tensor, same legal actions), and the resample
is drawn from what the seat saw alone (two states the seat cannot tell
apart resample to the same state for the same sampler).
"""

from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from open_spiel.python.algorithms import evaluate_bots, ismcts, mcts  # noqa: E402
from open_spiel.python.bots import uniform_random  # noqa: E402

from arena.env import openspiel_game  # noqa: E402
from arena.env.openspiel_game import GAME_NAME  # noqa: E402
from arena.settings.rules import RulesError  # noqa: E402


def _random_play(state, rng: np.random.Generator, actions: int) -> None:
    """Apply ``actions`` random moves (chance by its odds, players uniformly), or stop at the end."""
    for _ in range(actions):
        if state.is_terminal():
            return
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))


def test_parameters_are_the_rules_keys_on_top_of_a_preset():
    game = pyspiel.load_game(GAME_NAME, {"rules": "eaai", "knock_limit": 5, "episode": "hand", "reward": "points"})
    setup = openspiel_game.Setup.of(dict(game.get_parameters()))
    assert setup.rules.knock_limit == 5 and setup.rules.big_gin is False  # eaai's, with the override
    assert (setup.episode, setup.reward) == ("hand", "points")
    assert game.num_distinct_actions() == 58 and game.max_chance_outcomes() == 52
    assert game.observation_tensor_size() == game.information_state_tensor_size() == 378


@pytest.mark.parametrize(
    "params, error, words",
    [
        ({"knock_limit": 11}, RulesError, "knock_limit = 11 is out of range"),
        ({"rules": "no-such-preset"}, RulesError, "no-such-preset"),
        ({"episode": "set"}, ValueError, "episode: 'set' is not one of game, hand"),
        ({"reward": "money"}, ValueError, "reward: 'money'"),
    ],
)
def test_bad_parameters_get_one_line(params, error, words):
    with pytest.raises(error) as e:
        pyspiel.load_game(GAME_NAME, params)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_unknown_parameter_is_refused_by_openspiel():
    with pytest.raises(pyspiel.SpielError, match="Unknown parameter 'knock_limt'"):
        pyspiel.load_game(GAME_NAME, {"knock_limt": 5})


@pytest.mark.parametrize("params", [{"episode": "hand"}, {"episode": "hand", "rules": "oklahoma", "reward": "points"}])
def test_openspiel_random_sim_test_passes(params):
    """OpenSpiel's own API checker: random playouts, clones, serialization round trips, tensors.

    On single hands: it checks every state of a playout against every earlier
    one's strings, which a whole game's thousands of states make too slow
    for the suite (whole games are played in the tests below)."""
    pyspiel.random_sim_test(pyspiel.load_game(GAME_NAME, params), num_sims=2, serialize=True, verbose=False)


def test_whole_game_reaches_the_target_and_pays_the_winner():
    game = pyspiel.load_game(GAME_NAME, {"target": 25})
    state = game.new_initial_state()
    _random_play(state, np.random.default_rng(5), 100_000)
    assert state.is_terminal()
    assert sorted(state.returns()) == [-1.0, 1.0]
    scores = [int(x) for x in str(state).split("scores ")[1].split(" ")[0].split("-")]
    assert max(scores) >= 25 and int(np.argmax(state.returns())) == int(np.argmax(scores))
    assert state.information_state_string(0).count("hand over") > 1  # several hands, one episode


def test_illegal_action_raises_value_error_naming_the_legal_ones():
    state = pyspiel.load_game(GAME_NAME).new_initial_state()
    _random_play(state, np.random.default_rng(1), 22)  # dealer and deal: the upcard offer
    assert state.legal_actions() == [52, 54]
    with pytest.raises(ValueError, match=r"illegal action knock for player \d; legal: 52 \(take\), 54 \(pass\)"):
        state.apply_action(55)
    assert state.legal_actions() == [52, 54]  # nothing moved


def test_a_chance_action_that_is_not_an_outcome_is_refused_and_changes_nothing():
    """Forcing a deal is allowed, but only a possible one: the same card twice, a dealer 2 or a stock draw
    of a card in a hand would leave a broken state that fails moves later."""
    state = pyspiel.load_game(GAME_NAME, {"episode": "hand"}).new_initial_state()
    with pytest.raises(ValueError, match=r"chance action 2 is not possible now \(the first dealer: 0 or 1\)"):
        state.apply_action(2)
    state.apply_action(0)
    state.apply_action(5)
    with pytest.raises(ValueError, match=r"chance action 5 is not possible now \(a card not yet dealt: 0-4, 6-51\)"):
        state.apply_action(5)
    with pytest.raises(ValueError, match="chance action 52 is not possible"):
        state.apply_action(52)
    assert state.history() == [0, 5] and len(state.chance_outcomes()) == 51
    for card in range(6, 26):  # the rest of the deal and the upcard
        state.apply_action(card)
    while not state.is_chance_node():  # pass or draw until a stock draw waits for its card
        legal = state.legal_actions()
        state.apply_action(53 if 53 in legal else legal[-1])
    before = state.history()
    for held in (5, 25):  # a card in a hand, the upcard
        stock = r"\(a card still in the stock: 0-4, 26-51\)"
        with pytest.raises(ValueError, match=f"chance action {held} is not possible now {stock}"):
            state.apply_action(held)
    assert state.history() == before
    state.apply_action(30)  # a stock card is fine


def test_a_finished_state_takes_no_action_and_has_no_chance_outcomes():
    state = pyspiel.load_game(GAME_NAME, {"episode": "hand"}).new_initial_state()
    _random_play(state, np.random.default_rng(3), 100_000)
    assert state.is_terminal() and state.chance_outcomes() == []
    with pytest.raises(ValueError, match="the game is over; no action can be applied"):
        state.apply_action(52)


class _ISMCTS(ismcts.ISMCTSBot):
    """OpenSpiel's IS-MCTS bot, which lacks the restart_at that evaluate_bots calls."""

    def restart_at(self, state):
        self.reset()


def test_evaluate_bots_plays_mcts_and_ismcts_against_random():
    """OpenSpiel's own algorithms play the game: MCTS and IS-MCTS (which resamples the unseen cards)."""
    game = pyspiel.load_game(GAME_NAME, {"episode": "hand", "reward": "points"})
    rs = np.random.RandomState(7)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rs)
    for seat, searcher in enumerate(
        [
            mcts.MCTSBot(game, uct_c=2.0, max_simulations=3, evaluator=evaluator, random_state=rs, solve=False),
            _ISMCTS(game, evaluator, uct_c=2.0, max_simulations=3, random_state=rs),
        ]
    ):
        state = game.new_initial_state()
        _random_play(state, np.random.default_rng(seat), 60)  # from mid-hand: short playouts
        bots = [uniform_random.UniformRandomBot(1 - seat, rs)]
        bots.insert(seat, searcher)
        returns = evaluate_bots.evaluate_bots(state, bots, rs)
        assert state.is_terminal() and returns[0] == -returns[1]


def _positions(episode: str, seeds: range):
    """Random mid-play states, some several hands into a game."""
    game = pyspiel.load_game(GAME_NAME, {"episode": episode, "target": 30})
    for s in seeds:
        rng = np.random.default_rng(s)
        state = game.new_initial_state()
        _random_play(state, rng, int(rng.integers(25, 400)))
        if not state.is_terminal():
            yield state


def test_resample_is_indistinguishable_to_the_seat():
    checked = 0
    for state in _positions("game", range(40)):
        for p in (0, 1):
            sampler = pyspiel.UniformProbabilitySampler(11 + p, 0.0, 1.0)
            r = state.resample_from_infostate(p, sampler)
            assert r.information_state_string(p) == state.information_state_string(p)
            assert r.information_state_tensor(p) == state.information_state_tensor(p)
            assert r.observation_string(p) == state.observation_string(p)
            assert r.current_player() == state.current_player() or state.current_player() != p
            if state.current_player() == p:
                assert r.legal_actions() == state.legal_actions()
            checked += 1
    assert checked > 50


def test_resample_reads_only_what_the_seat_has_seen():
    """Two states the seat cannot tell apart resample alike, and the unseen cards do move.

    The second true state is itself a resample of the first; both are then
    resampled with the same sampler seed and must give the same history.  A
    resample that kept any hidden card of its input (the opponent's hand,
    the stock, which cards were dealt and which drawn) would differ here.
    """
    moved = 0
    for state in _positions("game", range(40, 70)):
        for p in (0, 1):
            twin = state.resample_from_infostate(p, pyspiel.UniformProbabilitySampler(99, 0.0, 1.0))
            assert twin.information_state_string(p) == state.information_state_string(p)
            a = state.resample_from_infostate(p, pyspiel.UniformProbabilitySampler(5, 0.0, 1.0))
            b = twin.resample_from_infostate(p, pyspiel.UniformProbabilitySampler(5, 0.0, 1.0))
            assert a.history() == b.history()
            moved += twin.history() != state.history()
    assert moved > 30  # the resamples are not the state itself


def test_resample_keeps_cards_the_opponent_took_from_the_pile():
    game = pyspiel.load_game(GAME_NAME, {"episode": "hand"})
    state = game.new_initial_state()
    _random_play(state, np.random.default_rng(3), 21)  # dealer, 20 cards: the upcard is next
    state.apply_action(state.chance_outcomes()[0][0])
    taker = state.current_player()
    upcard = state.information_state_string(taker).split("upcard ")[1].split("\n")[0]
    state.apply_action(52)  # the non-dealer takes the upcard: now it is known to be in its hand
    for seed in range(5):
        r = state.resample_from_infostate(1 - taker, pyspiel.UniformProbabilitySampler(seed, 0.0, 1.0))
        assert upcard in str(r).split("|")[taker]


@pytest.mark.parametrize("private", ["NONE", "ALL_PLAYERS"])
def test_an_observer_of_other_than_the_seats_own_information_is_refused(private):
    """A public-only observer (``private_info=NONE``) was handed the seat's hand in its tensor and string, and
    an all-players one got one seat's view: an observation type the game does not provide is one line."""
    from open_spiel.python.observation import make_observation

    game = pyspiel.load_game(GAME_NAME, {"episode": "hand"})
    kind = pyspiel.IIGObservationType(
        perfect_recall=False, public_info=True, private_info=getattr(pyspiel.PrivateInfoType, private)
    )
    with pytest.raises(ValueError, match=rf"^{GAME_NAME}: observations hold the seat's own view .* not private_info="):
        make_observation(game, kind)
    own = pyspiel.IIGObservationType(
        perfect_recall=True, public_info=True, private_info=pyspiel.PrivateInfoType.SINGLE_PLAYER
    )
    assert make_observation(game, own).tensor.shape == (378,)


def test_a_knock_tied_without_undercut_is_the_knockers_hand_for_the_win_reward():
    """With ``undercut_on_tie`` off, a knock the defender ties scores 0 points but is the knocker's hand (the
    engine's rule, and the Gymnasium env's +1): a hand episode's win returns were read from the points, 0-0."""
    p1 = [0, 1, 2, 17, 18, 19, 34, 47, 8, 27]  # Ac 2c 3c, 5d 6d 7d, 9h 9s 9c; 2h: deadwood 2
    p0 = [11, 24, 37, 49, 36, 23, 43, 44, 45, 40]  # Qc Qd Qh, Js Jh Jd, 5s 6s 7s; 2s: deadwood 2, no layoff
    # P0 deals ten to P1, ten to P0 and the upcard Kd; both pass it; P1 draws Ks (chance), discards it, knocks
    moves = [0, *p1, *p0, 25, 54, 54, 51, 51, 55]
    returns = {}
    for reward in ("win", "points"):
        state = pyspiel.load_game(GAME_NAME, {"episode": "hand", "undercut_on_tie": False, "reward": reward})
        state = state.new_initial_state()
        for a in moves:
            state.apply_action(a)
        assert state.is_terminal() and "hand over: knock, points 0-0" in state.information_state_string(0)
        returns[reward] = state.returns()
    assert returns == {"win": [-1.0, 1.0], "points": [0.0, 0.0]}


def test_a_rules_file_edited_between_two_loads_is_played_by_each_games_states_as_its_game_read_it(tmp_path):
    """Two ``load_game`` of one rules file, edited in between: each game's states score by the rules that game
    was loaded with, as its ``GameInfo`` says.  The states took their rules from a cache keyed by the game's
    parameters (the file's path), filled by the first state made: a state of the first game made before the
    edit gave the second game's states the first file's undercut bonus (10) while its ``max_utility`` followed
    the second (40)."""
    p1 = [0, 1, 2, 17, 18, 19, 34, 47, 8, 27]  # as above: P1 knocks with deadwood 2, P0 ties it and undercuts
    p0 = [11, 24, 37, 49, 36, 23, 43, 44, 45, 40]
    moves = [0, *p1, *p0, 25, 54, 54, 51, 51, 55]
    path = tmp_path / "my_rules.toml"
    params = {"rules": str(path), "episode": "hand", "reward": "points"}
    path.write_text('preset = "standard"\nundercut_bonus = 10\n')
    first = pyspiel.load_game(GAME_NAME, params)
    early = first.new_initial_state()  # made before the edit
    path.write_text('preset = "standard"\nundercut_bonus = 40\n')
    second = pyspiel.load_game(GAME_NAME, params)
    assert first.max_utility() < second.max_utility()  # each GameInfo read the file as it was
    states = [(early, 10), (first.new_initial_state(), 10), (second.new_initial_state(), 40)]
    for state, bonus in states:
        for a in moves:
            state.apply_action(a)
        assert state.is_terminal() and state.returns() == [bonus, -bonus]
        assert state.clone().returns() == [bonus, -bonus]


def test_a_resample_for_the_waiting_seat_keeps_the_opponents_pending_knock_question():
    """While a seat is asked whether to knock, OpenSpiel's turn order shows it to the other seat (the
    question is only asked when the discard left the deadwood within the limit).  A resample for the other
    seat dealt the asked seat cards of any deadwood, so the question was gone and the turn had passed: a state
    the waiting seat could tell apart (``to act P0`` instead of ``P1``)."""
    game = pyspiel.load_game(GAME_NAME, {"episode": "hand"})
    p1 = [0, 1, 2, 17, 18, 19, 34, 47, 8, 27]  # Ac 2c 3c, 5d 6d 7d, 9h 9s 9c; 2h
    p0 = [11, 24, 37, 49, 36, 23, 43, 44, 45, 40]
    state = game.new_initial_state()
    for a in [0, *p1, *p0, 25, 54, 54, 51, 51]:  # P1 draws Ks and discards it: deadwood 2, "knock?"
        state.apply_action(a)
    assert state.current_player() == 1 and state.legal_actions() == [55, 57]
    for seed in range(8):
        r = state.resample_from_infostate(0, pyspiel.UniformProbabilitySampler(seed, 0.0, 1.0))
        assert r.current_player() == 1 and r.legal_actions() == [55, 57], seed
        assert r.observation_string(0) == state.observation_string(0)
        assert r.information_state_string(0) == state.information_state_string(0)
        assert r.information_state_tensor(0) == state.information_state_tensor(0)
