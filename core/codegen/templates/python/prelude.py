import argparse
import concurrent.futures
import os
import sys
import threading
import time

import numpy as np
import torch
# <check-only> The rest of run.py uses every module.
(argparse, concurrent.futures, os, sys, threading, time, np, torch)
# </check-only>
