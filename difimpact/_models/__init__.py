from .base import AbstractPlanarModel as AbstractPlanarModel, AbstractSteppingModel as AbstractSteppingModel
from .biped_with_torso import BipedWithTorso as BipedWithTorso
from .compass_gait import CompassGait as CompassGait
from .crutch_walker import CrutchWalker as CrutchWalker
from .five_link_biped import FiveLinkBiped as FiveLinkBiped
from .rimless_wheel import RimlessWheel as RimlessWheel
from .simplest_walker import SimplestWalker as SimplestWalker
from .seven_link_human import HeelStrikePosture as HeelStrikePosture, SevenLinkHuman as SevenLinkHuman
from .tree_model import TreeModel as TreeModel
from .walker import AbstractWalker as AbstractWalker
