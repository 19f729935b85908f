"""inflect_lemma against a hand-written table of (lemma, PTB tag) -> form, and the rules
behind it: irregulars, uncountable and plural-only nouns, no doubled suffixes, safe
regular rules for words outside the lexicon, ``None`` where no sound form exists.

The expected forms are written by hand. Where lemminflect's lexicon lists the lemma, the
expected form is also checked to be one lemminflect gives (except the documented
corrections), so the table cannot drift from the lexicon unnoticed.
"""

from __future__ import annotations

import pytest

from brittle.search.generators.inflection import (
    UPOS_OF_TAG,
    inflect_lemma,
    is_lexicon_lemma,
    regular_inflection,
    regular_is_safe,
)

# lemma, tag, expected form ("-": None, no sound form). One case per line.
TABLE = """
cat NNS cats
dog NNS dogs
house NNS houses
book NNS books
tree NNS trees
idea NNS ideas
apple NNS apples
table NNS tables
student NNS students
window NNS windows
game NNS games
boy NNS boys
key NNS keys
day NNS days
toy NNS toys
valley NNS valleys
monkey NNS monkeys
journey NNS journeys
box NNS boxes
church NNS churches
dish NNS dishes
bus NNS buses
glass NNS glasses
class NNS classes
kiss NNS kisses
boss NNS bosses
fox NNS foxes
wish NNS wishes
match NNS matches
tax NNS taxes
quiz NNS quizzes
lens NNS lenses
city NNS cities
baby NNS babies
lady NNS ladies
party NNS parties
story NNS stories
country NNS countries
army NNS armies
family NNS families
company NNS companies
theory NNS theories
hero NNS heroes
potato NNS potatoes
tomato NNS tomatoes
echo NNS echoes
photo NNS photos
piano NNS pianos
video NNS videos
radio NNS radios
zoo NNS zoos
knife NNS knives
wife NNS wives
life NNS lives
leaf NNS leaves
wolf NNS wolves
half NNS halves
shelf NNS shelves
thief NNS thieves
chief NNS chiefs
belief NNS beliefs
proof NNS proofs
child NNS children
man NNS men
woman NNS women
person NNS people
mouse NNS mice
foot NNS feet
tooth NNS teeth
goose NNS geese
ox NNS oxen
louse NNS lice
criterion NNS criteria
phenomenon NNS phenomena
analysis NNS analyses
crisis NNS crises
thesis NNS theses
hypothesis NNS hypotheses
basis NNS bases
oasis NNS oases
stimulus NNS stimuli
alumnus NNS alumni
nucleus NNS nuclei
fungus NNS fungi
bacterium NNS bacteria
datum NNS data
medium NNS media
matrix NNS matrices
appendix NNS appendices
vertex NNS vertices
corpus NNS corpora
opus NNS opuses
millennium NNS millennia
larva NNS larvae
alga NNS algae
genus NNS genera
radius NNS radii
sheep NNS sheep
deer NNS deer
fish NNS fish
salmon NNS salmon
moose NNS moose
species NNS species
series NNS series
aircraft NNS aircraft
offspring NNS offspring
cattle NNS cattle
police NNS police
people NNS people
data NNS data
media NNS media
means NNS means
headquarters NNS headquarters
trousers NNS trousers
scissors NNS scissors
clothes NNS clothes
glasses NNS glasses
goods NNS goods
savings NNS savings
riches NNS riches
odds NNS odds
remains NNS remains
masses NNS masses
arms NNS arms
authorities NNS authorities
antics NNS antics
manners NNS manners
deeds NNS deeds
bacteria NNS bacteria
oxen NNS oxen
men NNS men
criteria NNS criteria
information NNS -
advice NNS -
furniture NNS -
equipment NNS -
knowledge NNS -
luggage NNS -
homework NNS -
research NNS -
evidence NNS -
news NNS -
music NNS -
traffic NNS -
software NNS -
weather NNS -
happiness NNS -
concealment NNS -
cholesterol NNS -
alacrity NNS -
ugliness NNS -
nervus NNS -
manus NNS -
cannabis NNS -
khaki NNS -
cherub NNS cherubs
seraph NNS seraphs
soldiery NNS soldieries
blicket NNS blickets
wug NNS wugs
grimsh NNS grimshes
florby NNS florbies
wuggie NNS wuggies
dax NNS -
toma NNS -
glatch NNS -
kleef NNS -
fendon NNS -
zorbus NNS -
glorpum NNS -
plinko NNS -
blorfman NNS -
mother-in-law NNS mothers-in-law
man-of-war NNS men-of-war
passer-by NNS passers-by
runner-up NNS runners-up
break-in NNS break-ins
look-up NNS look-ups
domestic-dog NNS domestic-dogs
o'clock NNS -
cat NN cat
people NN people
news NN news
physics NN physics
data NN data
means NN means
series NN series
sheep NN sheep
information NN information
furniture NN furniture
nervus NN nervus
trousers NN -
scissors NN -
glasses NN -
clothes NN -
masses NN -
authorities NN -
goods NN -
remains NN -
savings NN -
odds NN -
oxen NN -
criteria NN -
children NN -
o'clock NN o'clock
go VBZ goes
do VBZ does
have VBZ has
be VBZ is
say VBZ says
cry VBZ cries
play VBZ plays
fix VBZ fixes
watch VBZ watches
push VBZ pushes
miss VBZ misses
buzz VBZ buzzes
run VBZ runs
try VBZ tries
fly VBZ flies
carry VBZ carries
pay VBZ pays
enjoy VBZ enjoys
echo VBZ echoes
veto VBZ vetoes
undo VBZ undoes
forego VBZ foregoes
blorf VBZ blorfs
consisted VBZ -
go VBD went
be VBD was
see VBD saw
run VBD ran
eat VBD ate
take VBD took
make VBD made
think VBD thought
bring VBD brought
buy VBD bought
catch VBD caught
teach VBD taught
fight VBD fought
seek VBD sought
sit VBD sat
stand VBD stood
understand VBD understood
choose VBD chose
forbid VBD forbade
begin VBD began
swim VBD swam
sing VBD sang
ring VBD rang
drink VBD drank
write VBD wrote
ride VBD rode
drive VBD drove
rise VBD rose
fly VBD flew
know VBD knew
grow VBD grew
throw VBD threw
draw VBD drew
fall VBD fell
hold VBD held
feel VBD felt
keep VBD kept
sleep VBD slept
leave VBD left
lose VBD lost
mean VBD meant
send VBD sent
spend VBD spent
build VBD built
lend VBD lent
put VBD put
cut VBD cut
set VBD set
hit VBD hit
let VBD let
shut VBD shut
broadcast VBD broadcast
forecast VBD forecast
bid VBD bid
light VBD lit
hang VBD hung
lay VBD laid
pay VBD paid
say VBD said
have VBD had
do VBD did
dig VBD dug
stop VBD stopped
plan VBD planned
drop VBD dropped
rob VBD robbed
beg VBD begged
visit VBD visited
open VBD opened
offer VBD offered
refer VBD referred
prefer VBD preferred
occur VBD occurred
admit VBD admitted
regret VBD regretted
travel VBD traveled
picnic VBD picnicked
panic VBD panicked
try VBD tried
cry VBD cried
study VBD studied
play VBD played
enjoy VBD enjoyed
obey VBD obeyed
like VBD liked
hope VBD hoped
agree VBD agreed
free VBD freed
die VBD died
tie VBD tied
fix VBD fixed
mix VBD mixed
need VBD needed
seed VBD seeded
heed VBD heeded
embed VBD embedded
shred VBD shredded
consisted VBD consisted
feed VBD fed
weed VBD weeded
blorf VBD blorfed
blat VBD blatted
florbe VBD florbed
gorvit VBD -
flumic VBD -
snorka VBD -
go VBN gone
be VBN been
see VBN seen
take VBN taken
eat VBN eaten
write VBN written
choose VBN chosen
forbid VBN forbidden
speak VBN spoken
break VBN broken
steal VBN stolen
fall VBN fallen
give VBN given
drive VBN driven
ride VBN ridden
rise VBN risen
hide VBN hidden
bite VBN bitten
begin VBN begun
swim VBN swum
sing VBN sung
drink VBN drunk
ring VBN rung
know VBN known
grow VBN grown
throw VBN thrown
fly VBN flown
draw VBN drawn
show VBN shown
sew VBN sewn
do VBN done
get VBN gotten
forget VBN forgotten
freeze VBN frozen
wake VBN woken
quit VBN quit
light VBN lit
spell VBN spelled
spoil VBN spoiled
smell VBN smelled
lean VBN leaned
tear VBN torn
wear VBN worn
swear VBN sworn
bear VBN born
shake VBN shaken
mistake VBN mistaken
prove VBN proved
stop VBN stopped
plan VBN planned
visit VBN visited
study VBN studied
hope VBN hoped
agree VBN agreed
forego VBN foregone
go VBG going
be VBG being
see VBG seeing
run VBG running
sit VBG sitting
stop VBG stopping
swim VBG swimming
begin VBG beginning
plan VBG planning
forget VBG forgetting
admit VBG admitting
refer VBG referring
occur VBG occurring
visit VBG visiting
open VBG opening
offer VBG offering
make VBG making
take VBG taking
write VBG writing
hope VBG hoping
choose VBG choosing
agree VBG agreeing
flee VBG fleeing
free VBG freeing
canoe VBG canoeing
dye VBG dyeing
die VBG dying
lie VBG lying
tie VBG tying
play VBG playing
study VBG studying
try VBG trying
panic VBG panicking
sting VBG stinging
bring VBG bringing
sing VBG singing
ring VBG ringing
string VBG stringing
travel VBG traveling
cancel VBG canceling
have VBG having
do VBG doing
taxi VBG taxiing
typeset VBG typesetting
choosing VBG choosing
bungling VBG bungling
consisted VBG -
chose VBG -
login VBG -
blorf VBG blorfing
florbe VBG florbing
gorvit VBG -
be VBP are
go VBP go
have VBP have
do VBP do
run VBP run
go VB go
be VB be
consisted VB -
masses VB -
big JJR bigger
hot JJR hotter
thin JJR thinner
sad JJR sadder
wet JJR wetter
fat JJR fatter
red JJR redder
large JJR larger
nice JJR nicer
late JJR later
wide JJR wider
happy JJR happier
easy JJR easier
early JJR earlier
busy JJR busier
heavy JJR heavier
pretty JJR prettier
tall JJR taller
small JJR smaller
fast JJR faster
cheap JJR cheaper
strong JJR stronger
old JJR older
clever JJR cleverer
simple JJR simpler
narrow JJR narrower
gentle JJR gentler
free JJR freer
true JJR truer
blue JJR bluer
vague JJR vaguer
shy JJR shyer
dry JJR drier
good JJR better
bad JJR worse
far JJR farther
much JJR more
better JJR better
wrong JJR -
important JJR -
beautiful JJR -
interesting JJR -
expensive JJR -
overnice JJR -
well-known JJR -
big JJS biggest
hot JJS hottest
large JJS largest
nice JJS nicest
happy JJS happiest
easy JJS easiest
early JJS earliest
good JJS best
bad JJS worst
tall JJS tallest
small JJS smallest
simple JJS simplest
free JJS freest
blue JJS bluest
dry JJS driest
old JJS oldest
strong JJS strongest
far JJS farthest
best JJS best
important JJS -
beautiful JJS -
overnice JJS -
fast RBR faster
hard RBR harder
soon RBR sooner
well RBR better
early RBR earlier
long RBR longer
high RBR higher
close RBR closer
quickly RBR -
new RBR newer
joyride VBD -
slowly RBR -
carefully RBR -
fast RBS fastest
hard RBS hardest
well RBS best
early RBS earliest
late RBS latest
soon RBS soonest
quickly RBS -
big JJ big
better JJ -
quickly RB quickly
look-up VBD looked-up
baby-sit VBD baby-sat
double-check VBG double-checking
dog NNP -
dog XYZ -
3d NNS -
café NN -
"""

CASES: list[tuple[str, str, str | None]] = []
for line in TABLE.strip().splitlines():
    lemma, tag, form = line.split()
    CASES.append((lemma, tag, None if form == "-" else form))

#: Expected forms that deliberately differ from lemminflect's first form or list.
CORRECTIONS = {
    ("person", "NNS"),  # persons
    ("ox", "NNS"),  # not in the lexicon
    ("opus", "NNS"),  # opera
    ("corpus", "NNS"),  # corpuses
    ("salmon", "NNS"),  # salmons
    ("vertex", "NNS"),  # vertexes
    ("fish", "NNS"),  # fishes
    ("aircraft", "NNS"),  # aircrafts
    ("offspring", "NNS"),  # offsprings
    ("sting", "VBG"),  # sting
    ("typeset", "VBG"),  # typeset
    ("broadcast", "VBD"),  # broadcasted
    ("forecast", "VBD"),  # forecasted
    ("bid", "VBD"),  # bade
    ("quit", "VBN"),  # quitted
    ("light", "VBD"),  # lighted listed second
    ("light", "VBN"),  # lighted
    ("wake", "VBN"),  # waked
    ("spell", "VBN"),  # spelt
    ("spoil", "VBN"),  # spoilt
    ("smell", "VBN"),  # smelt
    ("lean", "VBN"),  # leant
    ("forego", "VBZ"),  # forgoes
    ("forego", "VBD"),  # forwent
    ("forego", "VBN"),  # forgone
    ("be", "VBP"),  # am first
    ("free", "JJR"),  # freeer
    ("free", "JJS"),  # freeest
    ("true", "JJR"),  # trueer
    ("blue", "JJR"),  # blueer
    ("blue", "JJS"),  # blueest
    ("vague", "JJR"),  # vagueer
    ("jiblets", "NNS"),  # jibletses
}


def test_the_table_is_large_and_covers_every_tag() -> None:
    assert len(CASES) >= 300
    assert len({(lemma, tag) for lemma, tag, _ in CASES}) == len(CASES), "duplicate rows"
    tags = {tag for _, tag, _ in CASES}
    assert {"NN", "NNS", "VBZ", "VBD", "VBN", "VBG", "VBP", "JJR", "JJS", "RBR", "RBS"} <= tags
    assert sum(form is None for _, _, form in CASES) >= 40


@pytest.mark.parametrize(("lemma", "tag", "form"), CASES)
def test_inflect_lemma_table(lemma: str, tag: str, form: str | None) -> None:
    assert inflect_lemma(lemma, tag) == form


@pytest.mark.parametrize(
    ("lemma", "tag", "form"),
    [c for c in CASES if c[2] is not None and (c[0], c[1]) not in CORRECTIONS],
)
def test_expected_forms_agree_with_lemminflect_where_it_knows_the_word(
    lemma: str, tag: str, form: str
) -> None:
    from lemminflect import getInflection

    upos = UPOS_OF_TAG[tag]
    if "-" in lemma or not is_lexicon_lemma(lemma, upos):
        pytest.skip("lemminflect's lexicon does not list the lemma for this class")
    listed = set(getInflection(lemma, tag=tag, inflect_oov=False))
    assert form in listed | {lemma}, f"lemminflect gives {sorted(listed)}"


@pytest.mark.parametrize(
    "lemma", [lemma for lemma, tag, form in CASES if tag == "NNS" and form is None]
)
def test_nouns_without_plural_are_mass_nouns_or_unsafe_outside_the_lexicon(lemma: str) -> None:
    """Every NNS refusal is explained: lemminflect itself lists the lemma as its own
    plural (a mass noun), or the word is outside the lexicon and its ending unsafe."""
    from lemminflect import getInflection

    if "-" in lemma or "'" in lemma:
        return
    if is_lexicon_lemma(lemma, "NOUN"):
        assert lemma in getInflection(lemma, tag="NNS", inflect_oov=False)
    else:
        assert not regular_is_safe(lemma, "NNS")


@pytest.mark.parametrize(
    "word",
    [
        "masses",
        "antics",
        "authorities",
        "glasses",
        "arms",
        "jiblets",
        "consisted",
        "bungling",
        "choosing",
        "selected",
        "chosen",
        "went",
        "nervuses",
        "bacteria",
        "oxen",
        "children",
        "criteria",
    ],
)
def test_an_inflected_word_never_gets_another_suffix(word: str) -> None:
    """``masses`` is never ``masseses``: every tag gives the word itself or None."""
    for tag in UPOS_OF_TAG:
        assert inflect_lemma(word, tag) in (word, None), tag


@pytest.mark.parametrize(
    ("tag", "number", "person", "form"),
    [
        ("VBD", "Sing", "3", "was"),
        ("VBD", "Sing", "1", "was"),
        ("VBD", "Sing", "2", "were"),
        ("VBD", "Plur", "3", "were"),
        ("VBD", "Plur", "1", "were"),
        ("VBD", None, None, "was"),
        ("VBP", "Sing", "1", "am"),
        ("VBP", "Sing", "2", "are"),
        ("VBP", "Plur", "1", "are"),
        ("VBP", "Plur", "3", "are"),
        ("VBP", None, None, "are"),
        ("VBZ", "Sing", "3", "is"),
        ("VBN", None, None, "been"),
    ],
)
def test_be_agrees_with_number_and_person(
    tag: str, number: str | None, person: str | None, form: str
) -> None:
    assert inflect_lemma("be", tag, number=number, person=person) == form


def test_other_verbs_ignore_agreement() -> None:
    assert inflect_lemma("go", "VBD", number="Plur", person="1") == "went"
    assert inflect_lemma("go", "VBP", number="Sing", person="1") == "go"


def test_capitalisation_of_the_lemma_is_kept() -> None:
    assert inflect_lemma("Dog", "NNS") == "Dogs"
    assert inflect_lemma("DOG", "NNS") == "DOGS"
    assert inflect_lemma("Child", "NNS") == "Children"
    assert inflect_lemma("Einstein", "NNS") == "Einsteins"


@pytest.mark.parametrize(
    ("stem", "tag", "safe"),
    [
        ("blicket", "NNS", True),
        ("nervus", "NNS", False),
        ("datum", "NNS", False),
        ("alga", "NNS", False),
        ("index", "NNS", False),
        ("potato", "NNS", False),
        ("leaf", "NNS", False),
        ("stomach", "NNS", False),
        ("chairman", "NNS", False),
        ("masses", "NNS", False),
        ("blorf", "VBD", True),
        ("gorvit", "VBD", False),  # doubling depends on stress
        ("panic", "VBD", False),
        ("choosing", "VBG", False),
        ("selected", "VBD", False),
        ("florbe", "VBG", True),
        ("blorf", "JJR", False),
        ("blorf", "NN", True),
        ("ab", "NNS", False),
        ("Blorf", "NNS", False),
    ],
)
def test_regular_is_safe(stem: str, tag: str, safe: bool) -> None:
    assert regular_is_safe(stem, tag) is safe


def test_regular_inflection_is_unchanged_for_pseudowords() -> None:
    # Jabberwocky relies on the plain rules, whatever the lexicon says.
    assert regular_inflection("blurry", "NNS") == "blurries"
    assert regular_inflection("blip", "VBG") == "blipping"
    assert regular_inflection("nervus", "NNS") == "nervuses"
